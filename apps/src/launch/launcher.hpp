// `boreal launch`: every node of a network as a local process (`boreal run FILE --node NAME`),
// their JSON lines gathered, and the run summary of the network built from them.
//
// The launcher starts the children with posix_spawn, reads each child's stdout through a
// pipe (progress lines and the final node report), and waits for them. A child that has not
// exited by the timeout is sent SIGTERM (it then reports what it has) and, 5 s later, SIGKILL.
// Only the launcher's own children are ever signalled, by PID. When `stop_signal` is set (by
// the CLI's SIGINT and SIGTERM handler) the children are stopped the same way.
//
// With `netns`, every node runs in a network namespace of its own (netns.hpp), started as
// `ip netns exec NS boreal run ...`: ip execs the node, so the PID the launcher holds and
// signals is the node's. The node keeps its port and its host becomes its namespace's
// address, passed to every child with --address. The namespaces are removed once every
// child has been waited for, on every path out of launch().
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "launch/netns.hpp"
#include "spec/network_spec.hpp"
#include "runtime/node_report.hpp"

namespace boreal::runtime {

// The command-line form of `overrides`, to pass on to a child (`--wait sleep --rate 1000`...).
[[nodiscard]] std::vector<std::string> to_args(const Overrides& overrides);

// Parses "NAME=URI" assignments (`--address`) and replaces those nodes' addresses. Every
// problem is reported (unknown node, no '=', bad URI), naming the flag.
[[nodiscard]] SpecResult<void> apply_addresses(NetworkSpec& spec,
                                               const std::vector<std::string>& assignments);

// Ports first .. first + span - 1 of this host, reserved among boreal processes for as long as
// the lease lives: an open-file-description lock (F_OFD_SETLK) on those bytes of one file per
// user, /tmp/boreal-ports-UID.lock, which the kernel drops when the lease (or its process) goes.
// Two launches on one host (parallel tests, two runs of one user) never hand out the same port
// while both hold their leases, though a port is only bound later, by the node that listens on
// it. Without the lock file (an unwritable /tmp) a lease reserves nothing, as before.
class PortLease {
 public:
  PortLease() = default;
  PortLease(PortLease&& other) noexcept;
  PortLease& operator=(PortLease&& other) noexcept;
  PortLease(const PortLease&) = delete;
  PortLease& operator=(const PortLease&) = delete;
  ~PortLease();

  [[nodiscard]] std::uint16_t port() const noexcept { return first_; }
  // Whether another process's lease would now be refused these ports.
  [[nodiscard]] bool reserved() const noexcept { return lock_fd_ >= 0; }
  // Keeps the reservation until the process exits (the lock's descriptor stays open).
  void keep_until_exit() noexcept { lock_fd_ = -1; }

 private:
  // Only lease_tcp_ports() makes a lease: it alone knows the descriptor holds the lock.
  friend transport::Result<PortLease> lease_tcp_ports(const std::string& host, std::uint16_t span);
  PortLease(std::uint16_t first, int lock_fd) : first_(first), lock_fd_(lock_fd) {}

  std::uint16_t first_ = 0;
  int lock_fd_ = -1;
};

// A free TCP port on `host` with the `span - 1` ports after it free too (each bound, then
// released), leased as above. Ports come from below the kernel's ephemeral range (32768 up),
// where connect() takes no source ports, and only then from the kernel (port 0).
[[nodiscard]] transport::Result<PortLease> lease_tcp_ports(const std::string& host,
                                                           std::uint16_t span = 1);

// The same, for callers that keep the port until they exit (tests that write node addresses
// themselves): the lease, and one descriptor with it, is held until the process exits, so
// a long-lived process that wants many ports calls lease_tcp_ports() instead.
[[nodiscard]] transport::Result<std::uint16_t> free_tcp_port(const std::string& host,
                                                             std::uint16_t span = 1);

// The configuration a summary reports (of the first stream between nodes), from the spec
// after overrides.
[[nodiscard]] RunConfig run_config_of(const NetworkSpec& spec);

struct LaunchOptions {
  std::string file;                 // the network file, as every child will read it
  std::vector<std::string> forwarded;  // override flags, passed to every child unchanged
  bool free_ports = false;  // move every loopback tcp or fabric node to a free port
  std::chrono::milliseconds timeout{0};  // 0 = the sources' duration + 30 s, or none
  std::ostream* json = nullptr;          // every JSON line: progress, node reports, summary
  std::ostream* progress = nullptr;      // one human line per progress report
  std::string executable = "/proc/self/exe";  // the `boreal` binary to run the nodes
  // Every node in a network namespace of its own, joined by veth pairs to a bridge (root
  // only; see check_netns). Each node's namespace and address go to `progress` and into the
  // summary's `nodes` entries.
  bool netns = false;
  LinkShaping shaping;  // tc netem on each node's link; netns only
  // A signal number (SIGINT, SIGTERM) once the launcher should stop: the nodes are sent
  // SIGTERM as on a timeout, and the launch fails saying so. nullptr: never.
  const std::atomic<int>* stop_signal = nullptr;
  std::ostream* notices = nullptr;  // namespaces of earlier, killed launchers that were removed
  // Live metrics (docs/metrics.md): node i of the file (in the file's order) serves them on
  // port *metrics_port + i, or on a free port of its own when *metrics_port is 0; nullopt:
  // none. check_metrics_port() says whether the ports fit.
  std::optional<std::uint16_t> metrics_port;
};

// Whether `options.metrics_port` leaves a port for every node of `spec` (base + nodes - 1 at
// most 65535). The message names the flag; nullopt when fine or unset.
[[nodiscard]] std::optional<std::string> check_metrics_port(const NetworkSpec& spec,
                                                            const LaunchOptions& options);

// Whether `options` can run `spec` in namespaces (when options.netns; else whether they ask
// for link shaping without it): root, `ip`, the node count, no --free-ports. The message names
// the flag and what is needed; nullopt when fine.
[[nodiscard]] std::optional<std::string> check_netns(const NetworkSpec& spec,
                                                     const LaunchOptions& options);

struct LaunchResult {
  std::vector<NodeReport> nodes;     // in the spec's node order
  std::optional<RunSummary> summary;  // networks with a source and a sink
  std::vector<std::string> errors;   // children that failed or reported errors
  [[nodiscard]] bool ok() const noexcept { return errors.empty(); }
};

// Runs every node of `spec` (already loaded and overridden as the children will do it) and
// waits for all. An Error only when a child cannot be started or, with `netns`, when the
// namespaces cannot be made (check_netns's message first).
[[nodiscard]] transport::Result<LaunchResult> launch(const NetworkSpec& spec,
                                                     const LaunchOptions& options);

}  // namespace boreal::runtime
