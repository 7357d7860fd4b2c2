// `boreal launch --netns`: every node of a network in a Linux network namespace of its own,
// so that a stream between nodes crosses real (virtual) network devices instead of loopback.
//
// The topology, made with iproute2's `ip` (and `tc` for --link-delay and --link-rate):
//
//   boreal-<pid>-n0  eth0 198.18.0.1/24 ─veth─ n0 ┐
//   boreal-<pid>-n1  eth0 198.18.0.2/24 ─veth─ n1 ├ br0 (a bridge in boreal-<pid>-hub)
//   ...                                           ┘
//
// Node i (in the network file's order) gets namespace boreal-<pid>-n<i> with `lo` up and
// eth0 at 198.18.0.(i+1)/24 (198.18.0.0/15 is reserved for benchmarking, RFC 2544); the other
// end of its veth pair, n<i>, is a port of the bridge br0 in boreal-<pid>-hub. Every device is
// made inside its namespace (`ip link add ... netns`), none in the host's. --link-delay and
// --link-rate put one tc netem qdisc on each node's eth0, its only egress: a packet from node
// A to node B is delayed (and paced) once, by A's qdisc, and nowhere else, so a tuple's
// one-way delay grows by exactly the link delay (plus its transmission time at the link
// rate), and a round trip by twice it.
//
// NetnsTopology owns the namespaces it made and removes them all when it is destroyed; a
// namespace removed while a node still runs in it lives on until that node exits. Single
// threaded: the launcher's thread makes, uses and destroys it. Every function here runs `ip`
// or `tc` as a child process and waits for it.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include <boreal/transport/error.hpp>

namespace boreal::runtime {

// The address plan: 198.18.0.1 .. 198.18.0.254, one /24 on one bridge.
inline constexpr std::size_t kMaxNetnsNodes = 254;

// Node `index`'s address: "198.18.0.<index + 1>".
[[nodiscard]] std::string netns_address(std::size_t index);

// tc netem on each node's link; zero = not set.
struct LinkShaping {
  std::chrono::microseconds delay{0};  // --link-delay
  std::uint64_t rate_bits_per_s = 0;   // --link-rate
};

// --link-delay: digits then us, ms or s ("500us", "2ms"), 1 us to 10 s, whole microseconds.
// Errors name the flag and quote the text.
[[nodiscard]] transport::Result<std::chrono::microseconds> parse_link_delay(std::string_view text);

// --link-rate: a number then bit, kbit, mbit, gbit or tbit (decimal, as tc writes them:
// "100mbit", "1gbit", "2.5gbit"), 1 kbit/s to 1 tbit/s. Errors name the flag and quote the text.
[[nodiscard]] transport::Result<std::uint64_t> parse_link_rate(std::string_view text);

// Why this process cannot make namespaces (not root, no `ip`), as the message to print;
// nullopt when it can. `ip_path` is find_tool("ip")'s answer, empty when there is none.
[[nodiscard]] std::optional<std::string> netns_unavailable(uid_t effective_uid,
                                                           const std::string& ip_path);

// Why `nodes` nodes do not fit the address plan; nullopt when they do.
[[nodiscard]] std::optional<std::string> netns_too_many_nodes(std::size_t nodes);

// The absolute path of an iproute2 tool ("ip", "tc"): the first on $PATH, else in /usr/sbin,
// /sbin, /usr/bin or /bin (root's tools are often missing from a user's PATH); empty if none.
[[nodiscard]] std::string find_tool(const std::string& name);

// Removes every boreal-<pid>-* namespace whose launcher <pid> is no longer running (one that
// was killed before it could clean up), and writes one line per namespace removed to
// `notices` (when not null). Namespaces of running processes are left alone.
void remove_stale_namespaces(std::ostream* notices);

class NetnsTopology {
 public:
  NetnsTopology() = default;
  NetnsTopology(const NetnsTopology&) = delete;
  NetnsTopology& operator=(const NetnsTopology&) = delete;
  ~NetnsTopology() { (void)remove(); }

  // Makes the hub and `nodes` node namespaces named after `owner` (the launcher's PID), with
  // their links shaped by `shaping`. On an error, what was made so far stays owned (and is
  // removed with the rest); the message names the command that failed and what it printed.
  [[nodiscard]] transport::Result<void> create(std::size_t nodes, const LinkShaping& shaping,
                                               pid_t owner);

  // Removes every namespace made (nodes first, the hub last); the messages of those that
  // could not be removed. Owns nothing afterwards.
  std::vector<std::string> remove();

  [[nodiscard]] std::size_t nodes() const noexcept { return node_namespaces_.size(); }
  [[nodiscard]] const std::string& node_namespace(std::size_t index) const {
    return node_namespaces_.at(index);
  }
  // The words that start a command inside node `index`'s namespace: ip netns exec NAME.
  [[nodiscard]] std::vector<std::string> exec_prefix(std::size_t index) const;

 private:
  transport::Result<void> add_namespace(const std::string& name);
  transport::Result<void> add_node(std::size_t index, const LinkShaping& shaping);

  std::string ip_;
  std::string hub_;  // empty until made
  std::vector<std::string> node_namespaces_;
};

}  // namespace boreal::runtime
