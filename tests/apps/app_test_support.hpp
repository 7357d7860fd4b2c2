// What the end-to-end tests of the `boreal` binary share: running a command, a temporary
// directory, and reading the JSON lines and files a run writes.
#pragma once

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

namespace boreal::test {

struct Output {
  int status = -1;
  std::string text;  // stdout and stderr together
};

// Runs a shell command; everything it prints is captured.
inline Output run(const std::string& command) {
  Output out;
  FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return out;
  std::array<char, 4096> chunk{};
  while (std::fgets(chunk.data(), chunk.size(), pipe) != nullptr) out.text += chunk.data();
  const int status = ::pclose(pipe);
  out.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return out;
}

// A directory under /tmp, removed with everything in it.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "boreal-test-XXXXXX").string();
    path_ = ::mkdtemp(pattern.data());
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir() { std::filesystem::remove_all(path_); }

  // The path of `name` in the directory; writes `text` there when it is not empty.
  [[nodiscard]] std::string file(const std::string& name, const std::string& text = "") const {
    const auto p = (path_ / name).string();
    if (!text.empty()) std::ofstream(p) << text;
    return p;
  }

 private:
  std::filesystem::path path_;
};

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// The JSON lines of a node's log (the lines that start with '{'; others are human messages).
// A line that is not valid JSON (still being written) becomes a discarded value.
inline std::vector<nlohmann::json> json_lines_of(const std::string& text) {
  std::vector<nlohmann::json> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line.front() == '{')
      lines.push_back(nlohmann::json::parse(line, nullptr, false));
  }
  return lines;
}

inline std::vector<nlohmann::json> read_json_lines(const std::string& path) {
  std::vector<nlohmann::json> lines;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty()) lines.push_back(nlohmann::json::parse(line));
  }
  return lines;
}

// The first line of `kind` (and, when given, of `node`); nullptr when there is none.
inline const nlohmann::json* find_kind(const std::vector<nlohmann::json>& lines,
                                       const std::string& kind, const std::string& node = "") {
  for (const auto& line : lines) {
    if (line.value("kind", "") == kind && (node.empty() || line.value("node", "") == node)) {
      return &line;
    }
  }
  return nullptr;
}

// Waits (at most 30 s) until the JSON lines in `path` hold a progress line of `node` whose
// `field` is above 0: a node that is streaming, where a fixed sleep would guess how long a busy
// machine spends starting and connecting. Returns whether it came.
inline bool await_progress(const std::string& path, const std::string& node, const char* field) {
  const auto seen = [&] {
    for (const nlohmann::json& line : json_lines_of(read_file(path))) {
      if (line.is_object() && line.value("kind", "") == "progress" &&
          line.value("node", "") == node && line.value(field, 0ULL) > 0) {
        return true;
      }
    }
    return false;
  };
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!seen() && std::chrono::steady_clock::now() < give_up) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return seen();
}

#ifdef BOREAL_BIN
// `boreal launch ARGS` as a child process, everything it prints going to a file.
class Launcher {
 public:
  Launcher(const TempDir& dir, const std::string& args) : output_(dir.file("launch.out")) {
    const std::string command = "exec " + std::string(BOREAL_BIN) + " launch " + args + " >" +
                                output_ + " 2>&1";
    const char* argv[] = {"/bin/sh", "-c", command.c_str(), nullptr};
    // sh execs boreal: pid_ is the launcher's PID (netns_test: its namespaces are named
    // after it).
    if (::posix_spawn(&pid_, "/bin/sh", nullptr, nullptr, const_cast<char**>(argv), environ) != 0) {
      pid_ = -1;
    }
  }
  Launcher(const Launcher&) = delete;
  Launcher& operator=(const Launcher&) = delete;
  ~Launcher() {
    if (pid_ > 0 && !status_) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }

  [[nodiscard]] pid_t pid() const { return pid_; }
  [[nodiscard]] bool running() {
    if (status_ || pid_ <= 0) return false;
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) status_ = status;
    return !status_;
  }
  // Its exit status, or nullopt when it did not exit within `limit` (it is then killed).
  std::optional<int> wait(std::chrono::seconds limit) {
    const auto give_up = std::chrono::steady_clock::now() + limit;
    while (running()) {
      if (std::chrono::steady_clock::now() > give_up) return std::nullopt;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    if (!status_ || !WIFEXITED(*status_)) return std::nullopt;
    return WEXITSTATUS(*status_);
  }
  [[nodiscard]] std::string output() const { return read_file(output_); }

 private:
  std::string output_;
  pid_t pid_ = -1;
  std::optional<int> status_;
};
#endif  // BOREAL_BIN

}  // namespace boreal::test
