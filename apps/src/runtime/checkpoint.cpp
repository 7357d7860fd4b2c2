#include "runtime/checkpoint.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
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

std::string frames_file(const std::string& path, std::uint64_t generation) {
  return path + ".frames." + std::to_string(generation);
}

// Writes `path` and waits for the data to reach the disk (before a rename makes it count).
transport::Result<void> write_durably(const std::string& path, const std::string& text) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    return fail(ErrorCategory::io, errno,
                "cannot write checkpoint " + path + ": " + std::strerror(errno));
  }
  const auto written = ::write(fd, text.data(), text.size());
  const int write_errno = errno;
  const bool synced = written == static_cast<ssize_t>(text.size()) && ::fdatasync(fd) == 0;
  ::close(fd);
  if (!synced) {
    return fail(ErrorCategory::io, write_errno,
                "cannot write checkpoint " + path + ": " + std::strerror(write_errno));
  }
  return transport::success();
}

}  // namespace

transport::Result<std::optional<Checkpoint>> load_checkpoint(const std::string& path,
                                                             const std::string& node) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    if (errno == ENOENT) return std::optional<Checkpoint>{};
    return fail(ErrorCategory::io, errno,
                "cannot read checkpoint " + path + ": " + std::strerror(errno));
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
    c.generation = j.value("generation", std::uint64_t{0});
    for (const auto& stream : j.value("inputs_ended", nlohmann::json::array())) {
      c.inputs_ended.insert(stream.get<std::string>());
    }
    for (const auto& box : j.value("boxes_finished", nlohmann::json::array())) {
      c.boxes_finished.insert(box.get<std::string>());
    }
    const auto outputs = j.value("outputs", nlohmann::json::object());
    const auto box_states = j.value("box_states", nlohmann::json::object());
    if (!outputs.empty() || !box_states.empty()) {
      const std::string frames_path = frames_file(path, c.generation);
      std::ifstream frames_in(frames_path, std::ios::binary);
      if (!frames_in) {
        return fail(ErrorCategory::io, errno,
                    where + "cannot read " + frames_path + ": " + std::strerror(errno));
      }
      std::vector<char> bytes((std::istreambuf_iterator<char>(frames_in)), {});
      auto beyond = [&](const std::string& what) {
        return fail(ErrorCategory::config, 0,
                    where + what + " lies beyond the end of " + frames_path + " (" +
                        std::to_string(bytes.size()) + " bytes)");
      };
      auto slice_of = [&](const nlohmann::json& o, const char* at,
                          const char* size) -> std::optional<std::vector<std::byte>> {
        const auto from = o.at(at).get<std::uint64_t>();
        const auto n = o.at(size).get<std::uint64_t>();
        if (from > bytes.size() || n > bytes.size() - from) return std::nullopt;
        const auto* base = reinterpret_cast<const std::byte*>(bytes.data()) + from;
        return std::vector<std::byte>(base, base + n);
      };
      for (const auto& [box, o] : box_states.items()) {
        auto state = slice_of(o, "at", "bytes");
        if (!state) return beyond("the state of box '" + box + "'");
        c.box_states.emplace(box, std::move(*state));
      }
      for (const auto& [key, o] : outputs.items()) {
        OutputState out;
        out.sender_id = o.at("sender_id").get<std::uint32_t>();
        out.committed = o.at("committed").get<std::uint64_t>();
        auto frames = slice_of(o, "frames_at", "frames_bytes");
        auto backlog = slice_of(o, "backlog_at", "backlog_bytes");
        if (!frames || !backlog) return beyond("output '" + key + "'");
        out.frames = std::move(*frames);
        out.backlog = std::move(*backlog);
        c.outputs.emplace(key, std::move(out));
      }
    }
    return std::optional<Checkpoint>(std::move(c));
  } catch (const nlohmann::json::exception& e) {
    return fail(ErrorCategory::config, 0, where + "not a checkpoint (" + e.what() + ")");
  }
}

transport::Result<void> save_checkpoint(const std::string& path, const Checkpoint& checkpoint) {
  nlohmann::json j = {{"format", kFormat}, {"node", checkpoint.node},
                      {"generation", checkpoint.generation}};
  j["boxes_finished"] = checkpoint.boxes_finished;
  if (!checkpoint.outputs.empty() || !checkpoint.box_states.empty()) {
    std::string bytes;
    j["box_states"] = nlohmann::json::object();
    for (const auto& [box, state] : checkpoint.box_states) {
      j["box_states"][box] = {{"at", bytes.size()}, {"bytes", state.size()}};
      bytes.append(reinterpret_cast<const char*>(state.data()), state.size());
    }
    j["outputs"] = nlohmann::json::object();
    for (const auto& [key, o] : checkpoint.outputs) {
      j["outputs"][key] = {{"sender_id", o.sender_id},        {"committed", o.committed},
                           {"frames_at", bytes.size()},       {"frames_bytes", o.frames.size()},
                           {"backlog_at", bytes.size() + o.frames.size()},
                           {"backlog_bytes", o.backlog.size()}};
      bytes.append(reinterpret_cast<const char*>(o.frames.data()), o.frames.size());
      bytes.append(reinterpret_cast<const char*>(o.backlog.data()), o.backlog.size());
    }
    if (auto ok = write_durably(frames_file(path, checkpoint.generation), bytes); !ok) return ok;
  }
  j["inputs"] = nlohmann::json::object();
  for (const auto& [stream, frame] : checkpoint.inputs) j["inputs"][stream] = frame;
  j["inputs_ended"] = checkpoint.inputs_ended;
  j["sinks"] = nlohmann::json::object();
  for (const auto& [sink, state] : checkpoint.sinks) j["sinks"][sink] = to_json(state);
  const std::string temp = path + ".new";
  if (auto ok = write_durably(temp, j.dump() + "\n"); !ok) return ok;
  if (std::rename(temp.c_str(), path.c_str()) != 0) {
    return fail(ErrorCategory::io, errno,
                "cannot replace checkpoint " + path + ": " + std::strerror(errno));
  }
  if (checkpoint.generation > 0) {
    std::remove(frames_file(path, checkpoint.generation - 1).c_str());
  }
  return transport::success();
}

void remove_checkpoint(const std::string& path, std::uint64_t generation) {
  std::remove(path.c_str());
  std::remove(frames_file(path, generation).c_str());
}

}  // namespace boreal::runtime
