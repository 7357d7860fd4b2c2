#include "runtime/checkpoint.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include <fcntl.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

namespace boreal::runtime {
namespace {

using transport::ErrorCategory;
using transport::fail;

constexpr int kFormat = 1;

nlohmann::json to_json(const SinkState& s) {
  return {{"file_bytes", s.file_bytes}, {"tuples", s.tuples},         {"batches", s.batches},
          {"bytes", s.bytes},           {"crc", s.crc},               {"lost", s.lost},
          {"duplicated", s.duplicated}, {"out_of_order", s.out_of_order}, {"next_seq", s.next_seq}};
}

SinkState sink_from_json(const nlohmann::json& j) {
  return {.file_bytes = j.at("file_bytes").get<std::uint64_t>(),
          .tuples = j.at("tuples").get<std::uint64_t>(),
          .batches = j.at("batches").get<std::uint64_t>(),
          .bytes = j.at("bytes").get<std::uint64_t>(),
          .crc = j.at("crc").get<std::uint32_t>(),
          .lost = j.at("lost").get<std::uint64_t>(),
          .duplicated = j.at("duplicated").get<std::uint64_t>(),
          .out_of_order = j.at("out_of_order").get<std::uint64_t>(),
          .next_seq = j.at("next_seq").get<std::uint64_t>()};
}

}  // namespace

transport::Result<std::optional<Checkpoint>> load_checkpoint(const std::string& path,
                                                             const std::string& node) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    if (errno == ENOENT) return std::optional<Checkpoint>{};
    return fail(ErrorCategory::io, errno, "cannot read checkpoint " + path + ": " + std::strerror(errno));
  }
  std::stringstream text;
  text << in.rdbuf();
  const std::string where = "checkpoint " + path + ": ";
  try {
    const auto j = nlohmann::json::parse(text.str());
    if (j.at("format").get<int>() != kFormat) {
      return fail(ErrorCategory::config, 0,
                  where + "format " + j.at("format").dump() + " (this build reads " +
                      std::to_string(kFormat) + ")");
    }
    Checkpoint c;
    c.node = j.at("node").get<std::string>();
    if (c.node != node) {
      return fail(ErrorCategory::config, 0,
                  where + "it belongs to node '" + c.node + "', not '" + node + "'");
    }
    for (const auto& [stream, frame] : j.at("inputs").items()) {
      c.inputs.emplace(stream, frame.get<std::uint64_t>());
    }
    for (const auto& [sink, state] : j.at("sinks").items()) {
      c.sinks.emplace(sink, sink_from_json(state));
    }
    return std::optional<Checkpoint>(std::move(c));
  } catch (const nlohmann::json::exception& e) {
    return fail(ErrorCategory::config, 0, where + "not a checkpoint (" + e.what() + ")");
  }
}

transport::Result<void> save_checkpoint(const std::string& path, const Checkpoint& checkpoint) {
  nlohmann::json j = {{"format", kFormat}, {"node", checkpoint.node}};
  j["inputs"] = nlohmann::json::object();
  for (const auto& [stream, frame] : checkpoint.inputs) j["inputs"][stream] = frame;
  j["sinks"] = nlohmann::json::object();
  for (const auto& [sink, state] : checkpoint.sinks) j["sinks"][sink] = to_json(state);
  const std::string text = j.dump() + "\n";
  const std::string temp = path + ".new";
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    return fail(ErrorCategory::io, errno, "cannot write checkpoint " + temp + ": " + std::strerror(errno));
  }
  const auto written = ::write(fd, text.data(), text.size());
  const int write_errno = errno;
  // The data reaches the disk before the rename makes it the checkpoint.
  const bool synced = written == static_cast<ssize_t>(text.size()) && ::fdatasync(fd) == 0;
  ::close(fd);
  if (!synced) {
    return fail(ErrorCategory::io, write_errno,
                "cannot write checkpoint " + temp + ": " + std::strerror(write_errno));
  }
  if (std::rename(temp.c_str(), path.c_str()) != 0) {
    return fail(ErrorCategory::io, errno,
                "cannot replace checkpoint " + path + ": " + std::strerror(errno));
  }
  return transport::success();
}

}  // namespace boreal::runtime
