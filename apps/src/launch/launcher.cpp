#include "launch/launcher.hpp"
#include "runtime/node.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <random>
#include <cstring>
#include <filesystem>
#include <map>
#include <utility>

extern char** environ;

namespace boreal::runtime {
namespace {

using transport::ErrorCategory;
using transport::fail;

std::string format_number(double value) {
  char text[64];
  std::snprintf(text, sizeof text, "%.17g", value);
  return text;
}

bool is_loopback(const std::string& host) {
  return host == "localhost" || host.rfind("127.", 0) == 0 || host == "::1";
}

std::string signal_name(int signal) {
  if (signal == SIGINT) return "SIGINT";
  if (signal == SIGTERM) return "SIGTERM";
  return "signal " + std::to_string(signal);
}

struct Child {
  std::string node;
  pid_t pid = -1;
  int out_fd = -1;
  std::string buffer;  // partial line
  bool eof = false;
  int status = 0;
  bool exited = false;
  std::optional<NodeReport> report;
  std::vector<std::string> parse_errors;
};

void handle_line(Child& child, const std::string& line, const LaunchOptions& options) {
  if (line.empty()) return;
  nlohmann::json json = nlohmann::json::parse(line, nullptr, false);
  if (json.is_discarded() || !json.is_object()) {
    child.parse_errors.push_back("node '" + child.node + "' printed a line that is not JSON: " +
                                 line.substr(0, 200));
    return;
  }
  // A line at a time, so that the file can be followed while the run goes on.
  if (options.json != nullptr) *options.json << json.dump() << '\n' << std::flush;
  const std::string kind = json.value("kind", "");
  if (kind == "node") {
    auto report = node_report_from_json(json);
    if (report) {
      child.report = std::move(report).value();
    } else {
      child.parse_errors.push_back("node '" + child.node + "': " + report.error().message);
    }
  } else if (kind == "progress" && options.progress != nullptr) {
    char text[256];
    std::snprintf(text, sizeof text, "  %-8s %6.1f s  sent %12llu  received %12llu\n",
                  child.node.c_str(), json.value("elapsed_s", 0.0),
                  static_cast<unsigned long long>(json.value("tuples_sent", 0ULL)),
                  static_cast<unsigned long long>(json.value("tuples_received", 0ULL)));
    *options.progress << text << std::flush;
  }
}

void drain(Child& child, const LaunchOptions& options) {
  char chunk[4096];
  for (;;) {
    const ssize_t n = ::read(child.out_fd, chunk, sizeof chunk);
    if (n > 0) {
      child.buffer.append(chunk, static_cast<std::size_t>(n));
      std::size_t at;
      while ((at = child.buffer.find('\n')) != std::string::npos) {
        handle_line(child, child.buffer.substr(0, at), options);
        child.buffer.erase(0, at + 1);
      }
      continue;
    }
    if (n == 0) {
      child.eof = true;
      if (!child.buffer.empty()) handle_line(child, child.buffer, options);
      child.buffer.clear();
    } else if (errno == EINTR) {
      continue;
    }
    return;  // EAGAIN: nothing more for now
  }
}

transport::Result<Child> spawn(const std::string& node, const std::vector<std::string>& args,
                               const std::string& executable) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    return fail(ErrorCategory::io, errno, std::string("pipe: ") + std::strerror(errno));
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  // The node starts with SIGINT and SIGTERM blocked and unblocks them once its own handlers
  // are in (boreal's main()), so a node stopped before that still stops on its own terms and
  // reports: the signal waits. (When boreal linked libfabric, libinfinipath's handlers, in
  // before main(), ended such a node with status 1 and no word.)
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  sigset_t blocked;
  ::pthread_sigmask(SIG_SETMASK, nullptr, &blocked);
  sigaddset(&blocked, SIGINT);
  sigaddset(&blocked, SIGTERM);
  posix_spawnattr_setsigmask(&attributes, &blocked);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGMASK);
  std::vector<char*> argv;
  argv.reserve(args.size() + 1);
  for (const auto& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  pid_t pid = -1;
  const int rc =
      ::posix_spawn(&pid, executable.c_str(), &actions, &attributes, argv.data(), environ);
  posix_spawnattr_destroy(&attributes);
  posix_spawn_file_actions_destroy(&actions);
  ::close(fds[1]);
  if (rc != 0) {
    ::close(fds[0]);
    return fail(ErrorCategory::io, rc,
                "cannot start node '" + node + "' (" + executable + "): " + std::strerror(rc));
  }
  // Our end never blocks: drain() reads what is there and returns to the poll loop.
  ::fcntl(fds[0], F_SETFL, ::fcntl(fds[0], F_GETFL) | O_NONBLOCK);
  Child child;
  child.node = node;
  child.pid = pid;
  child.out_fd = fds[0];
  return child;
}

}  // namespace

std::vector<std::string> to_args(const Overrides& o) {
  std::vector<std::string> args;
  auto add = [&](const char* flag, const std::string& value) {
    args.emplace_back(flag);
    args.push_back(value);
  };
  if (o.medium) add("--medium", *o.medium);
  if (o.provider) add("--provider", *o.provider);
  if (o.wait) add("--wait", *o.wait);
  if (o.latency_budget_us) add("--latency-budget", std::to_string(*o.latency_budget_us));
  if (o.spin_us) add("--spin-us", std::to_string(*o.spin_us));
  if (o.batch_bytes) add("--batch-bytes", std::to_string(*o.batch_bytes));
  if (o.flush_us) add("--flush-us", std::to_string(*o.flush_us));
  if (o.rate) add("--rate", *o.rate);
  if (o.tuples) add("--tuples", std::to_string(*o.tuples));
  if (o.duration_s) add("--duration", format_number(*o.duration_s));
  if (o.warmup_s) add("--warmup", format_number(*o.warmup_s));
  if (o.tuple_bytes) add("--tuple-bytes", std::to_string(*o.tuple_bytes));
  if (o.window) add("--window", std::to_string(*o.window));
  if (o.connection) add("--connection", *o.connection);
  if (o.no_output) args.emplace_back("--no-output");
  return args;
}

SpecResult<void> apply_addresses(NetworkSpec& spec, const std::vector<std::string>& assignments) {
  SpecErrors errors;
  std::vector<std::pair<std::size_t, Uri>> changes;
  for (const auto& text : assignments) {
    const auto eq = text.find('=');
    if (eq == std::string::npos) {
      errors.messages.push_back("--address: expected NAME=URI, got '" + text + "'");
      continue;
    }
    const std::string name = text.substr(0, eq);
    std::size_t index = spec.nodes.size();
    for (std::size_t i = 0; i < spec.nodes.size(); ++i) {
      if (spec.nodes[i].name == name) index = i;
    }
    if (index == spec.nodes.size()) {
      errors.messages.push_back("--address: no node named '" + name + "'");
      continue;
    }
    auto uri = parse_uri(text.substr(eq + 1));
    if (!uri) {
      errors.messages.push_back("--address " + name + ": " + uri.error().message);
      continue;
    }
    changes.emplace_back(index, std::move(uri).value());
  }
  if (!errors.messages.empty()) return errors;
  for (auto& [index, uri] : changes) {
    spec.nodes[index].address = uri.to_string();
    spec.nodes[index].uri = std::move(uri);
  }
  return boost::outcome_v2::success();
}

namespace {

// Whether ports first .. first + span - 1 of `address` can all be bound now.
bool ports_free(sockaddr_in address, std::uint16_t first, std::uint16_t span) {
  for (std::uint16_t i = 0; i < span; ++i) {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return false;
    address.sin_port = htons(static_cast<std::uint16_t>(first + i));
    const bool ok = ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0;
    ::close(fd);
    if (!ok) return false;
  }
  return true;
}

// A descriptor of its own (an open file description of its own, which is what an OFD lock
// belongs to) on the user's port lock file; -1 when it cannot be opened.
int open_port_lock_file() {
  const std::string path = "/tmp/boreal-ports-" + std::to_string(::getuid()) + ".lock";
  return ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
}

// Locks (F_WRLCK) or unlocks (F_UNLCK) bytes first .. first + span - 1 of the lock file; a lock
// fails when another lease holds any of them.
bool set_port_lock(int fd, short type, std::uint16_t first, std::uint16_t span) {
  struct flock lock {};
  lock.l_type = type;
  lock.l_whence = SEEK_SET;
  lock.l_start = first;
  lock.l_len = span;
  return ::fcntl(fd, F_OFD_SETLK, &lock) == 0;
}

}  // namespace

PortLease::PortLease(PortLease&& other) noexcept
    : first_(other.first_), lock_fd_(std::exchange(other.lock_fd_, -1)) {}

PortLease& PortLease::operator=(PortLease&& other) noexcept {
  if (this != &other) {
    if (lock_fd_ >= 0) ::close(lock_fd_);
    first_ = other.first_;
    lock_fd_ = std::exchange(other.lock_fd_, -1);
  }
  return *this;
}

PortLease::~PortLease() {
  if (lock_fd_ >= 0) ::close(lock_fd_);  // which drops the lock
}

transport::Result<PortLease> lease_tcp_ports(const std::string& host, std::uint16_t span) {
  span = std::max<std::uint16_t>(span, 1);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  if (::inet_pton(AF_INET, host == "localhost" ? "127.0.0.1" : host.c_str(), &address.sin_addr) !=
      1) {
    return fail(ErrorCategory::config, 0, "free port: '" + host + "' is not an IPv4 address");
  }
  const int lock_fd = open_port_lock_file();
  // Ports below the kernel's usual ephemeral range (32768-60999): connect() takes its source
  // ports from that range, so a port handed out there can be taken by any connection made
  // before the node binds it. A port another lease holds is skipped before it is tried.
  static thread_local std::mt19937 random{std::random_device{}()};
  for (int attempt = 0; attempt < 64; ++attempt) {
    const auto first = static_cast<std::uint16_t>(20000 + random() % 12000);
    if (lock_fd >= 0 && !set_port_lock(lock_fd, F_WRLCK, first, span)) continue;
    if (ports_free(address, first, span)) return PortLease(first, lock_fd);
    if (lock_fd >= 0) set_port_lock(lock_fd, F_UNLCK, first, span);
  }
  // Then a port the kernel picks (port 0), reserved too when no other lease holds it.
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    const int error = errno;
    if (lock_fd >= 0) ::close(lock_fd);
    return fail(ErrorCategory::io, error, std::string("socket: ") + std::strerror(error));
  }
  address.sin_port = 0;
  socklen_t length = sizeof address;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    const int error = errno;
    ::close(fd);
    if (lock_fd >= 0) ::close(lock_fd);
    return fail(ErrorCategory::io, error, "free port on " + host + ": " + std::strerror(error));
  }
  ::close(fd);
  const std::uint16_t port = ntohs(address.sin_port);
  if (lock_fd >= 0 && set_port_lock(lock_fd, F_WRLCK, port, span)) return PortLease(port, lock_fd);
  if (lock_fd >= 0) ::close(lock_fd);
  return PortLease(port, -1);
}

transport::Result<std::uint16_t> free_tcp_port(const std::string& host, std::uint16_t span) {
  auto lease = lease_tcp_ports(host, span);
  if (!lease) return std::move(lease).error();
  lease.value().keep_until_exit();
  return lease.value().port();
}

std::optional<std::string> check_netns(const NetworkSpec& spec, const LaunchOptions& options) {
  if (!options.netns) {
    const char* flag = options.shaping.delay.count() != 0       ? "--link-delay"
                       : options.shaping.rate_bits_per_s != 0 ? "--link-rate"
                                                              : nullptr;
    if (flag == nullptr) return std::nullopt;
    return std::string("boreal launch ") + flag +
           ": needs --netns (it shapes the links between the nodes' namespaces)";
  }
  if (options.free_ports) {
    return "boreal launch --netns: drop --free-ports; every node has a namespace and an address "
           "of its own, where the port from the file is free";
  }
  if (auto too_many = netns_too_many_nodes(spec.nodes.size())) return too_many;
  return netns_unavailable(::geteuid(), find_tool("ip"));
}

std::optional<std::string> check_metrics_port(const NetworkSpec& spec,
                                              const LaunchOptions& options) {
  if (!options.metrics_port || *options.metrics_port == 0) return std::nullopt;
  const std::size_t last = *options.metrics_port + spec.nodes.size() - 1;
  if (last <= 65535) return std::nullopt;
  return "boreal launch --metrics-port " + std::to_string(*options.metrics_port) + ": " +
         std::to_string(spec.nodes.size()) + " nodes need ports up to " + std::to_string(last) +
         ", past 65535";
}

RunConfig run_config_of(const NetworkSpec& spec) {
  RunConfig config;
  config.network = spec.name;
  config.medium = spec.transport.medium;
  config.wait = std::string(transport::to_string(spec.transport.wait.mode));
  config.batch_bytes = spec.transport.batch_bytes;
  config.latency_budget_us = spec.transport.wait.latency_budget.count();
  config.flush_us = spec.transport.flush.count();
  // The first stream between nodes; else the first stream (inside one node: inproc).
  const auto crossing = std::find_if(spec.streams.begin(), spec.streams.end(),
                                     [](const StreamSpec& s) { return s.crosses_nodes; });
  const StreamSpec* chosen = crossing != spec.streams.end() ? &*crossing
                             : spec.streams.empty()         ? nullptr
                                                            : &spec.streams.front();
  if (chosen != nullptr) {
    const StreamSpec& stream = *chosen;
    config.medium = stream.crosses_nodes ? stream.transport.medium : "inproc";
    if (stream.crosses_nodes && is_fabric(stream.transport.medium)) {
      config.provider = fabric_provider(spec, stream);
    }
    config.wait = std::string(transport::to_string(stream.transport.wait.mode));
    config.batch_bytes = stream.transport.batch_bytes;
    config.latency_budget_us = stream.transport.wait.latency_budget.count();
    config.flush_us = stream.transport.flush.count();
    if (stream.tuple_schema) config.tuple_bytes = stream.tuple_schema->tuple_bytes();
  }
  // The offered rate: the chosen stream's source, else the first source (a network whose
  // first crossing stream comes out of an operator).
  const BoxSpec* source = chosen == nullptr ? nullptr : spec.find_box(chosen->producer);
  if (source == nullptr || !source->source) {
    const auto first = std::find_if(spec.boxes.begin(), spec.boxes.end(),
                                    [](const BoxSpec& box) { return box.source.has_value(); });
    source = first == spec.boxes.end() ? nullptr : &*first;
  }
  if (source != nullptr) config.offered_rate = source->source->rate;
  config.warmup_s = spec.warmup.count();
  return config;
}

transport::Result<LaunchResult> launch(const NetworkSpec& spec, const LaunchOptions& options) {
  if (auto bad = check_netns(spec, options)) return fail(ErrorCategory::config, 0, *bad);
  if (auto bad = check_metrics_port(spec, options)) return fail(ErrorCategory::config, 0, *bad);
  auto stop_signal = [&] {
    return options.stop_signal == nullptr ? 0 : options.stop_signal->load();
  };
  std::vector<std::string> addresses;
  // The free ports of the nodes, reserved among boreal processes until the nodes are done.
  std::vector<PortLease> port_leases;
  // Declared before the children, so that every path out of here removes the namespaces
  // after the children have been waited for.
  NetnsTopology topology;
  std::vector<std::pair<std::string, std::string>> placed;  // per node: namespace, address
  std::string node_executable = options.executable;
  if (options.netns) {
    // `ip netns exec` runs the node: /proc/self/exe would name ip.
    std::error_code error;
    node_executable = std::filesystem::canonical(options.executable, error).string();
    if (error) {
      return fail(ErrorCategory::io, error.value(),
                  "boreal launch --netns: cannot resolve " + options.executable + ": " +
                      error.message());
    }
    remove_stale_namespaces(options.notices);
    if (auto made = topology.create(spec.nodes.size(), options.shaping, ::getpid()); !made) {
      // A Ctrl-C also reaches the `ip` being run, which then fails.
      if (const int signal = stop_signal(); signal != 0) {
        return fail(ErrorCategory::io, 0,
                    "boreal launch --netns: got " + signal_name(signal) +
                        " while making the namespaces, which are removed");
      }
      return std::move(made).error();
    }
    // Every node keeps its port; its host becomes its namespace's address.
    for (std::size_t i = 0; i < spec.nodes.size(); ++i) {
      const NodeSpec& node = spec.nodes[i];
      if (options.progress != nullptr) {
        *options.progress << "node " << node.name << ": netns " << topology.node_namespace(i)
                          << ", " << netns_address(i) << '\n' << std::flush;
      }
      Uri moved = node.uri;
      if (moved.scheme != "inproc") {
        moved.host = netns_address(i);
        addresses.push_back(node.name + "=" + moved.to_string());
      }
      placed.emplace_back(topology.node_namespace(i), moved.to_string());
    }
  }
  if (options.free_ports) {
    for (const auto& node : spec.nodes) {
      if (node.uri.scheme == "inproc" || !is_loopback(node.uri.host)) continue;
      // A node listens on its port and the next (libfabric), and thread t > 0 on port + 2t
      // and + 2t + 1: all must be free.
      auto lease = lease_tcp_ports(node.uri.host, static_cast<std::uint16_t>(2 * node.threads));
      if (!lease) return std::move(lease).error();
      Uri moved = node.uri;
      moved.port = lease.value().port();
      port_leases.push_back(std::move(lease).value());
      addresses.push_back(node.name + "=" + moved.to_string());
    }
  }

  std::chrono::milliseconds timeout = options.timeout;
  // A little longer than the nodes' own limit, so they time out and report first.
  if (timeout.count() == 0) timeout = time_limit(spec, std::chrono::seconds(40));

  // Receivers first: they open their ports while the senders start.
  std::vector<const NodeSpec*> order;
  for (const auto& node : spec.nodes) {
    for (const auto& box : spec.boxes) {
      if (box.node == node.name && box.type == "sink") {
        order.push_back(&node);
        break;
      }
    }
  }
  for (const auto& node : spec.nodes) {
    if (std::find(order.begin(), order.end(), &node) == order.end()) order.push_back(&node);
  }

  std::vector<Child> children;
  for (const NodeSpec* node : order) {
    if (stop_signal() != 0) break;  // the loop below stops those already started
    std::vector<std::string> args = {"boreal", "run", options.file, "--node", node->name};
    args.insert(args.end(), options.forwarded.begin(), options.forwarded.end());
    for (const auto& assignment : addresses) {
      args.emplace_back("--address");
      args.push_back(assignment);
    }
    if (options.metrics_port) {
      const auto index = static_cast<std::size_t>(node - spec.nodes.data());
      args.emplace_back("--metrics-port");
      args.push_back(
          std::to_string(*options.metrics_port == 0 ? 0 : *options.metrics_port + index));
    }
    std::string executable = options.executable;
    if (options.netns) {
      auto prefix = topology.exec_prefix(static_cast<std::size_t>(node - spec.nodes.data()));
      args.front() = node_executable;
      args.insert(args.begin(), prefix.begin(), prefix.end());
      executable = prefix.front();
    }
    auto child = spawn(node->name, args, executable);
    if (!child) {
      for (auto& c : children) ::kill(c.pid, SIGTERM);
      for (auto& c : children) ::waitpid(c.pid, nullptr, 0);
      return std::move(child).error();
    }
    children.push_back(std::move(child).value());
  }

  const auto start = std::chrono::steady_clock::now();
  bool terminated = false;
  int interrupted = 0;  // the signal that stopped the launch
  std::chrono::steady_clock::time_point killed_at{};
  bool kill_pending = false;
  auto stop_children = [&](std::chrono::steady_clock::time_point now) {
    killed_at = now;
    kill_pending = true;
    for (auto& child : children) {
      if (!child.eof) ::kill(child.pid, SIGTERM);
    }
  };
  for (;;) {
    std::vector<pollfd> fds;
    std::vector<Child*> owners;
    for (auto& child : children) {
      if (!child.eof) {
        fds.push_back({child.out_fd, POLLIN, 0});
        owners.push_back(&child);
      }
    }
    if (fds.empty()) break;
    const int ready = ::poll(fds.data(), fds.size(), 200);
    if (ready < 0 && errno != EINTR) break;
    for (std::size_t i = 0; i < fds.size(); ++i) {
      if (fds[i].revents != 0) drain(*owners[i], options);
    }
    const auto now = std::chrono::steady_clock::now();
    if (timeout.count() > 0 && !terminated && interrupted == 0 && now - start > timeout) {
      terminated = true;
      stop_children(now);
    }
    if (interrupted == 0 && !terminated && stop_signal() != 0) {
      interrupted = stop_signal();
      stop_children(now);
    }
    if (kill_pending && now - killed_at > std::chrono::seconds(5)) {
      for (auto& child : children) {
        if (!child.eof) ::kill(child.pid, SIGKILL);
      }
      kill_pending = false;
    }
  }

  LaunchResult result;
  for (auto& child : children) {
    ::close(child.out_fd);
    int status = 0;
    while (::waitpid(child.pid, &status, 0) < 0 && errno == EINTR) {
    }
    for (auto& e : child.parse_errors) result.errors.push_back(std::move(e));
    if (WIFSIGNALED(status)) {
      result.errors.push_back("node '" + child.node + "' was killed by signal " +
                              std::to_string(WTERMSIG(status)));
    } else if (WIFEXITED(status) && WEXITSTATUS(status) != 0 && !child.report) {
      result.errors.push_back("node '" + child.node + "' exited with status " +
                              std::to_string(WEXITSTATUS(status)) + " (its error is above)");
    }
    if (terminated) {
      result.errors.push_back("node '" + child.node + "' did not finish within " +
                              std::to_string(timeout.count()) + " ms and was stopped");
    }
  }
  // A signal may also have come before every node was started, or after they finished.
  if (const int signal = interrupted != 0 ? interrupted : stop_signal(); signal != 0) {
    result.errors.push_back("the launcher got " + signal_name(signal) + " and stopped the nodes");
  }
  for (auto& problem : topology.remove()) result.errors.push_back(std::move(problem));
  // Reports in the spec's node order.
  for (const auto& node : spec.nodes) {
    for (auto& child : children) {
      if (child.node == node.name && child.report) result.nodes.push_back(*child.report);
    }
  }
  for (const auto& report : result.nodes) {
    for (const auto& e : report.errors) result.errors.push_back(report.node + ": " + e);
  }

  // Every network with a source and a sink gets a run summary: the two-node one's fields,
  // then a section per node, box and link. Counts and checksums are compared end to end only
  // where every sink reads a source's stream.
  bool pass_through = true;
  for (const BoxSpec& box : spec.boxes) {
    if (box.type != "sink" || box.inputs.empty()) continue;
    const StreamSpec* in = spec.find_stream(box.inputs.front());
    const BoxSpec* producer = in == nullptr ? nullptr : spec.find_box(in->producer);
    pass_through = pass_through && producer != nullptr && producer->type == "source";
  }
  const bool has_sender =
      std::any_of(result.nodes.begin(), result.nodes.end(), [](const NodeReport& r) {
        return std::any_of(r.boxes.begin(), r.boxes.end(),
                           [](const BoxReport& b) { return b.type == "source"; });
      });
  const bool has_receiver =
      std::any_of(result.nodes.begin(), result.nodes.end(), [](const NodeReport& r) {
        return std::any_of(r.boxes.begin(), r.boxes.end(),
                           [](const BoxReport& b) { return b.type == "sink"; });
      });
  if (has_sender && has_receiver) {
    result.summary = summarize_network(run_config_of(spec), result.nodes, pass_through);
    // The summary's own findings (counts, checksums, losses) fail the launch too.
    for (const std::string& error : result.summary->errors) {
      if (std::find(result.errors.begin(), result.errors.end(), error) == result.errors.end()) {
        result.errors.push_back(error);
      }
    }
    if (options.json != nullptr) {
      nlohmann::json summary = to_json(*result.summary);
      // With --netns, every node entry gets the namespace it ran in and its address there.
      if (!placed.empty() && summary.contains("nodes")) {
        for (auto& entry : summary["nodes"]) {
          for (std::size_t i = 0; i < placed.size(); ++i) {
            if (spec.nodes[i].name != entry.value("node", "")) continue;
            entry["netns"] = placed[i].first;
            entry["address"] = placed[i].second;
          }
        }
      }
      *options.json << summary.dump() << '\n';
    }
  }
  if (options.json != nullptr) options.json->flush();
  return result;
}

}  // namespace boreal::runtime
