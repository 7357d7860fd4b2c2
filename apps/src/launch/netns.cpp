#include "launch/netns.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include "spec/spec_values.hpp"

extern char** environ;

namespace boreal::runtime {
namespace {

using transport::ErrorCategory;
using transport::fail;

constexpr const char* kBridge = "br0";
constexpr const char* kNodeDevice = "eth0";
constexpr std::chrono::microseconds kMaxLinkDelay = std::chrono::seconds(10);
constexpr double kMinLinkRate = 1e3;   // 1 kbit/s
constexpr double kMaxLinkRate = 1e12;  // 1 tbit/s

std::string joined(const std::vector<std::string>& words) {
  std::string text;
  for (const auto& word : words) text += (text.empty() ? "" : " ") + word;
  return text;
}

std::string trimmed(std::string text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.pop_back();
  return text;
}

// Runs argv (argv[0] a path) with stdin from /dev/null and waits for it: what it printed on
// stdout and stderr, or an Error quoting the command, how it ended, and what it printed.
transport::Result<std::string> run_tool(const std::vector<std::string>& argv) {
  const std::string command = "`" + joined(argv) + "`";
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    return fail(ErrorCategory::io, errno, command + ": pipe: " + std::strerror(errno));
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDERR_FILENO);
  std::vector<char*> words;
  for (const auto& word : argv) words.push_back(const_cast<char*>(word.c_str()));
  words.push_back(nullptr);
  pid_t pid = -1;
  const int rc =
      ::posix_spawn(&pid, argv.front().c_str(), &actions, nullptr, words.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(fds[1]);
  if (rc != 0) {
    ::close(fds[0]);
    return fail(ErrorCategory::io, rc, command + ": cannot start it: " + std::strerror(rc));
  }
  std::string output;
  char chunk[4096];
  for (;;) {
    const ssize_t n = ::read(fds[0], chunk, sizeof chunk);
    if (n > 0) {
      output.append(chunk, static_cast<std::size_t>(n));
    } else if (n == 0 || errno != EINTR) {
      break;
    }
  }
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return output;
  const std::string how = WIFSIGNALED(status)
                              ? "was killed by signal " + std::to_string(WTERMSIG(status))
                              : "failed with exit status " + std::to_string(WEXITSTATUS(status));
  output = trimmed(std::move(output));
  return fail(ErrorCategory::io, 0, command + " " + how + (output.empty() ? "" : ": " + output));
}

std::string in_quotes(std::string_view text) { return "'" + std::string(text) + "'"; }

// "boreal-<pid>-..." -> pid; nullopt for any other name.
std::optional<pid_t> launcher_of(std::string_view name) {
  constexpr std::string_view prefix = "boreal-";
  if (name.substr(0, prefix.size()) != prefix) return std::nullopt;
  name.remove_prefix(prefix.size());
  pid_t pid = 0;
  const auto [stop, ec] = std::from_chars(name.data(), name.data() + name.size(), pid);
  if (ec != std::errc{} || stop == name.data() || pid <= 0 || stop == name.data() + name.size() ||
      *stop != '-') {
    return std::nullopt;
  }
  return pid;
}

}  // namespace

std::string netns_address(std::size_t index) { return "198.18.0." + std::to_string(index + 1); }

transport::Result<std::chrono::microseconds> parse_link_delay(std::string_view text) {
  const Duration duration = parse_duration(text);
  if (!duration.matched) {
    return fail(ErrorCategory::config, 0,
                "--link-delay: expected a duration such as 500us or 2ms (digits, then us, ms or "
                "s), got " + in_quotes(text));
  }
  const auto limit_ns = std::chrono::nanoseconds(kMaxLinkDelay).count();
  if (duration.too_large || duration.ns > limit_ns || duration.ns < 1000) {
    return fail(ErrorCategory::config, 0,
                "--link-delay: must be between 1us and 10s, got " + in_quotes(text));
  }
  if (duration.ns % 1000 != 0) {
    return fail(ErrorCategory::config, 0,
                "--link-delay: must be whole microseconds (tc's unit), got " + in_quotes(text));
  }
  return std::chrono::microseconds(duration.ns / 1000);
}

transport::Result<std::uint64_t> parse_link_rate(std::string_view text) {
  double number = 0;
  const char* end = text.data() + text.size();
  const auto [stop, ec] = std::from_chars(text.data(), end, number);
  const std::string_view unit(stop, static_cast<std::size_t>(end - stop));
  double scale = 0;
  if (unit == "bit") scale = 1;
  if (unit == "kbit") scale = 1e3;
  if (unit == "mbit") scale = 1e6;
  if (unit == "gbit") scale = 1e9;
  if (unit == "tbit") scale = 1e12;
  // from_chars also reads "inf" and "nan"; neither is a rate.
  if (ec != std::errc{} || stop == text.data() || scale == 0 || !std::isfinite(number)) {
    return fail(ErrorCategory::config, 0,
                "--link-rate: expected a rate such as 100mbit or 1gbit (a number, then bit, kbit, "
                "mbit, gbit or tbit), got " + in_quotes(text));
  }
  const double bits = number * scale;
  if (!(bits >= kMinLinkRate && bits <= kMaxLinkRate)) {
    return fail(ErrorCategory::config, 0,
                "--link-rate: must be between 1kbit and 1tbit, got " + in_quotes(text));
  }
  return static_cast<std::uint64_t>(std::llround(bits));
}

std::optional<std::string> netns_unavailable(uid_t effective_uid, const std::string& ip_path) {
  if (effective_uid != 0) {
    return "boreal launch --netns: needs root (network namespaces and veth pairs); run as root or "
           "drop --netns";
  }
  if (ip_path.empty()) {
    return "boreal launch --netns: needs `ip` from iproute2, which is not on $PATH, /usr/sbin or "
           "/sbin; install iproute2 or drop --netns";
  }
  return std::nullopt;
}

std::optional<std::string> netns_too_many_nodes(std::size_t nodes) {
  if (nodes <= kMaxNetnsNodes) return std::nullopt;
  return "boreal launch --netns: the network has " + std::to_string(nodes) +
         " nodes; its address plan (198.18.0.1-198.18.0.254) has room for " +
         std::to_string(kMaxNetnsNodes);
}

std::string find_tool(const std::string& name) {
  std::vector<std::string> dirs;
  if (const char* path = std::getenv("PATH")) {
    std::istringstream in(path);
    for (std::string dir; std::getline(in, dir, ':');) {
      if (!dir.empty()) dirs.push_back(dir);
    }
  }
  for (const char* dir : {"/usr/sbin", "/sbin", "/usr/bin", "/bin"}) dirs.emplace_back(dir);
  for (const auto& dir : dirs) {
    const std::string candidate = dir + "/" + name;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

void remove_stale_namespaces(std::ostream* notices) {
  const std::string ip = find_tool("ip");
  if (ip.empty()) return;
  auto listed = run_tool({ip, "netns", "list"});
  if (!listed) return;
  // One namespace a line: "NAME" or "NAME (id: N)".
  std::istringstream lines(listed.value());
  for (std::string line; std::getline(lines, line);) {
    const std::string name = line.substr(0, line.find(' '));
    const auto pid = launcher_of(name);
    if (!pid || ::kill(*pid, 0) == 0 || errno != ESRCH) continue;
    auto removed = run_tool({ip, "netns", "delete", name});
    if (notices == nullptr) continue;
    if (removed) {
      *notices << "boreal launch --netns: removed namespace " << name << ", left by launcher "
               << *pid << ", which is no longer running\n";
    } else {
      *notices << "boreal launch --netns: cannot remove namespace " << name << ", left by launcher "
               << *pid << ": " << removed.error().message << '\n';
    }
  }
}

transport::Result<void> NetnsTopology::add_namespace(const std::string& name) {
  if (auto added = run_tool({ip_, "netns", "add", name}); !added) {
    return fail(ErrorCategory::io, 0,
                "boreal launch --netns: cannot make network namespace " + name + ": " +
                    added.error().message);
  }
  return transport::success();
}

transport::Result<void> NetnsTopology::create(std::size_t nodes, const LinkShaping& shaping,
                                              pid_t owner) {
  ip_ = find_tool("ip");
  if (ip_.empty()) return fail(ErrorCategory::config, 0, *netns_unavailable(0, ip_));
  const std::string prefix = "boreal-" + std::to_string(owner) + "-";
  if (auto added = add_namespace(prefix + "hub"); !added) return added;
  hub_ = prefix + "hub";
  for (const auto& command : std::vector<std::vector<std::string>>{
           {ip_, "-n", hub_, "link", "add", kBridge, "type", "bridge"},
           {ip_, "-n", hub_, "link", "set", kBridge, "up"}}) {
    if (auto done = run_tool(command); !done) {
      return fail(ErrorCategory::io, 0, "boreal launch --netns: " + done.error().message);
    }
  }
  for (std::size_t i = 0; i < nodes; ++i) {
    const std::string name = prefix + "n" + std::to_string(i);
    if (auto added = add_namespace(name); !added) return added;
    node_namespaces_.push_back(name);
    if (auto made = add_node(i, shaping); !made) return made;
  }
  return transport::success();
}

transport::Result<void> NetnsTopology::add_node(std::size_t index, const LinkShaping& shaping) {
  const std::string& ns = node_namespaces_.at(index);
  const std::string port = "n" + std::to_string(index);  // the hub's end: at most "n253"
  // Both ends are made in their namespaces: nothing is added to the host's.
  const std::vector<std::vector<std::string>> commands = {
      {ip_, "link", "add", kNodeDevice, "netns", ns, "type", "veth", "peer", "name", port,
       "netns", hub_},
      {ip_, "-n", hub_, "link", "set", port, "master", kBridge, "up"},
      {ip_, "-n", ns, "address", "add", netns_address(index) + "/24", "dev", kNodeDevice},
      {ip_, "-n", ns, "link", "set", kNodeDevice, "up"},
      {ip_, "-n", ns, "link", "set", "lo", "up"}};
  for (const auto& command : commands) {
    if (auto done = run_tool(command); !done) {
      return fail(ErrorCategory::io, 0, "boreal launch --netns: " + done.error().message);
    }
  }
  if (shaping.delay.count() == 0 && shaping.rate_bits_per_s == 0) return transport::success();

  std::string flags = shaping.delay.count() != 0 ? "--link-delay" : "";
  if (shaping.rate_bits_per_s != 0) flags += flags.empty() ? "--link-rate" : "/--link-rate";
  const std::string tc = find_tool("tc");
  if (tc.empty()) {
    return fail(ErrorCategory::config, 0,
                "boreal launch " + flags + ": needs `tc` from iproute2, which is not on $PATH, "
                "/usr/sbin or /sbin; install iproute2 or drop " + flags);
  }
  std::vector<std::string> command = {tc,   "-n",        ns,     "qdisc", "add",
                                      "dev", kNodeDevice, "root", "netem"};
  if (shaping.delay.count() != 0) {
    command.emplace_back("delay");
    command.push_back(std::to_string(shaping.delay.count()) + "us");
  }
  if (shaping.rate_bits_per_s != 0) {
    command.emplace_back("rate");
    command.push_back(std::to_string(shaping.rate_bits_per_s) + "bit");
  }
  auto shaped = run_tool(command);
  if (!shaped) {
    const bool no_netem = shaped.error().message.find("qdisc kind is unknown") != std::string::npos;
    return fail(ErrorCategory::io, 0,
                "boreal launch " + flags + ": " + shaped.error().message +
                    (no_netem ? " (this kernel has no netem qdisc: it needs CONFIG_NET_SCH_NETEM, "
                                "the sch_netem module)"
                              : ""));
  }
  return transport::success();
}

std::vector<std::string> NetnsTopology::remove() {
  std::vector<std::string> problems;
  auto remove_one = [&](const std::string& name) {
    if (auto removed = run_tool({ip_, "netns", "delete", name}); !removed) {
      problems.push_back("boreal launch --netns: cannot remove namespace " + name + ": " +
                         removed.error().message);
    }
  };
  for (auto it = node_namespaces_.rbegin(); it != node_namespaces_.rend(); ++it) remove_one(*it);
  if (!hub_.empty()) remove_one(hub_);
  node_namespaces_.clear();
  hub_.clear();
  return problems;
}

std::vector<std::string> NetnsTopology::exec_prefix(std::size_t index) const {
  return {ip_, "netns", "exec", node_namespaces_.at(index)};
}

}  // namespace boreal::runtime
