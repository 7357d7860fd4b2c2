// `boreal launch --netns`: every node in a network namespace of its own, joined by veth pairs
// to a bridge. Two nodes deliver every tuple over tcp and over fabric-msg from their own
// namespaces at 198.18.0.x; --link-delay raises the latency by at least the delay; a failing
// node, a launch stopped by SIGINT and a namespace left by a killed launcher all end with no
// boreal-<pid>-* namespace left; and the flags' errors say what is wrong.
//
// The tests that make namespaces need root and a kernel that lets `ip netns add` work; they
// skip, saying why, elsewhere. Each runs `boreal launch` as a child process (its PID names
// the namespaces) and waits for it with a time limit.
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "apps/app_test_support.hpp"
#include "launch/netns.hpp"

extern char** environ;

namespace {

using nlohmann::json;
using namespace boreal::test;
using namespace std::chrono_literals;

std::string two_nodes(const std::string& source_params, const std::string& medium = "tcp") {
  return "name: netns\n"
         "schemas:\n"
         "  tick: [{seq: i64}, {ts: timestamp}, {key: i64}, {pad: str40}]\n"
         "nodes:\n"
         "  - {name: src, address: \"tcp://127.0.0.1:7101\"}\n"
         "  - {name: dst, address: \"tcp://127.0.0.1:7102\"}\n"
         "transport: {medium: " + medium + ", wait: block}\n"
         "boxes:\n"
         "  - {name: gen, type: source, node: src, out: ticks, schema: tick,\n"
         "     params: " + source_params + "}\n"
         "  - {name: check, type: sink, node: dst, in: ticks, schema: tick,\n"
         "     params: {kind: check}}\n";
}

// Why namespaces cannot be made here, or nullopt when they can (probed with a namespace of
// our own).
std::optional<std::string> cannot_make_namespaces() {
  if (::geteuid() != 0) return "not root: network namespaces need root";
  if (boreal::runtime::find_tool("ip").empty()) return "no `ip` (iproute2)";
  const std::string probe = "boreal-probe-" + std::to_string(::getpid());
  const auto added = run("ip netns add " + probe);
  if (added.status != 0) return "`ip netns add` is not permitted here: " + added.text;
  (void)run("ip netns delete " + probe);
  return std::nullopt;
}

#define SKIP_UNLESS_NAMESPACES()                                          \
  do {                                                                    \
    if (const auto why = cannot_make_namespaces()) GTEST_SKIP() << *why;  \
  } while (false)

// The namespaces `ip netns list` shows for launcher `pid`.
std::vector<std::string> namespaces_of(pid_t pid) {
  const std::string prefix = "boreal-" + std::to_string(pid) + "-";
  std::vector<std::string> names;
  const auto listed = run("ip netns list");
  std::istringstream lines(listed.text);
  for (std::string line; std::getline(lines, line);) {
    const std::string name = line.substr(0, line.find(' '));
    if (name.rfind(prefix, 0) == 0) names.push_back(name);
  }
  return names;
}

// The PIDs of the processes in namespace `name` (none while it does not exist).
std::vector<std::string> pids_in(const std::string& name) {
  std::vector<std::string> pids;
  std::istringstream lines(run("ip netns pids " + name).text);
  for (std::string line; std::getline(lines, line);) {
    if (!line.empty() && line.find_first_not_of("0123456789") == std::string::npos) {
      pids.push_back(line);
    }
  }
  return pids;
}

// While `launcher` runs: waits (up to 30 s) until both node namespaces hold a process, and
// returns their PIDs (node 0's, node 1's); empty when it never happens.
std::vector<std::string> wait_for_nodes(Launcher& launcher) {
  const std::string prefix = "boreal-" + std::to_string(launcher.pid()) + "-n";
  const auto give_up = std::chrono::steady_clock::now() + 30s;
  while (launcher.running() && std::chrono::steady_clock::now() < give_up) {
    const auto first = pids_in(prefix + "0");
    const auto second = pids_in(prefix + "1");
    if (!first.empty() && !second.empty()) return {first.front(), second.front()};
    std::this_thread::sleep_for(20ms);
  }
  return {};
}

// Launches `spec` with --netns and `flags`, checks that the two nodes ran in namespaces of
// their own at 198.18.0.1 and .2 and that every tuple arrived, and returns the summary.
json deliver_everything(const std::string& spec_text, const std::string& flags) {
  TempDir dir;
  const auto spec = dir.file("net.yaml", spec_text);
  const auto lines_path = dir.file("run.jsonl");
  Launcher launcher(dir, spec + " --netns --timeout 60 --json " + lines_path + " " + flags);
  EXPECT_GT(launcher.pid(), 0);
  const auto node_pids = wait_for_nodes(launcher);
  const auto status = launcher.wait(90s);
  const std::string text = launcher.output();
  EXPECT_EQ(status, 0) << text;
  EXPECT_EQ(namespaces_of(launcher.pid()), std::vector<std::string>{}) << "left behind";

  // Two processes, one in each node namespace.
  EXPECT_EQ(node_pids.size(), 2u) << "the node namespaces never held a process\n" << text;
  if (node_pids.size() == 2) {
    EXPECT_NE(node_pids[0], node_pids[1]);
  }
  const std::string ns = "boreal-" + std::to_string(launcher.pid()) + "-n";
  EXPECT_NE(text.find("node src: netns " + ns + "0, 198.18.0.1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("node dst: netns " + ns + "1, 198.18.0.2\n"), std::string::npos) << text;

  const auto lines = read_json_lines(lines_path);
  if (lines.empty()) {
    ADD_FAILURE() << "no JSON lines\n" << text;
    return json::object();
  }
  const json& summary = lines.back();
  EXPECT_EQ(summary.value("kind", ""), "run") << summary.dump();
  EXPECT_EQ(summary["lost"], 0);
  EXPECT_EQ(summary["duplicated"], 0);
  EXPECT_EQ(summary["checksum_ok"], true);
  EXPECT_TRUE(summary["errors"].empty()) << summary["errors"].dump();
  // The nodes listened and connected at their namespace addresses, on the file's ports.
  const json& nodes = summary["nodes"];
  EXPECT_EQ(nodes.size(), 2u) << summary.dump();
  if (nodes.size() == 2) {
    EXPECT_EQ(nodes[0]["netns"], ns + "0");
    EXPECT_EQ(nodes[1]["netns"], ns + "1");
    EXPECT_EQ(nodes[0].value("address", ""), "tcp://198.18.0.1:7101");
    EXPECT_EQ(nodes[1].value("address", ""), "tcp://198.18.0.2:7102");
  }
  return summary;
}

TEST(Netns, TwoNodesOverTcpInNamespacesOfTheirOwnDeliverEveryTuple) {
  SKIP_UNLESS_NAMESPACES();
  // The host has no 198.18 address: a node that listens on one is in its namespace.
  EXPECT_EQ(run("ip -o address show").text.find(" 198.18."), std::string::npos);
  const json summary = deliver_everything(two_nodes("{rate: 20000, tuples: 40000, seed: 3}"), "");
  EXPECT_EQ(summary["medium"], "tcp");
  EXPECT_EQ(summary["tuples_sent"], 40000);
  EXPECT_EQ(summary["tuples_received"], 40000);
}

TEST(Netns, TwoNodesOverFabricMsgInNamespacesOfTheirOwnDeliverEveryTuple) {
  SKIP_UNLESS_NAMESPACES();
  const json summary =
      deliver_everything(two_nodes("{rate: 20000, tuples: 40000, seed: 5}", "fabric-msg"), "");
  EXPECT_EQ(summary["medium"], "fabric-msg");
  EXPECT_EQ(summary["tuples_sent"], 40000);
  EXPECT_EQ(summary["tuples_received"], 40000);
}

TEST(Netns, LinkDelayRaisesTheLatencyByAtLeastTheDelay) {
  SKIP_UNLESS_NAMESPACES();
  TempDir dir;
  const auto spec = dir.file("net.yaml", two_nodes("{rate: 1000, tuples: 2000}"));
  const auto lines_path = dir.file("run.jsonl");
  Launcher launcher(dir,
                    spec + " --netns --link-delay 2ms --timeout 60 --quiet --json " + lines_path);
  const auto status = launcher.wait(90s);
  const std::string text = launcher.output();
  EXPECT_EQ(namespaces_of(launcher.pid()), std::vector<std::string>{}) << "left behind";
  if (text.find("this kernel has no netem qdisc") != std::string::npos) {
    GTEST_SKIP() << "the kernel has no netem qdisc (CONFIG_NET_SCH_NETEM): " << text;
  }
  ASSERT_EQ(status, 0) << text;
  const auto lines = read_json_lines(lines_path);
  ASSERT_FALSE(lines.empty()) << text;
  const json& summary = lines.back();
  EXPECT_EQ(summary["tuples_received"], 2000);
  EXPECT_EQ(summary["lost"], 0);
  // Each tuple crosses the sender's veth once: at least 2 ms later than it was stamped.
  EXPECT_GE(summary["latency_us"]["p50"].get<double>(), 2000.0) << summary["latency_us"].dump();
}

TEST(Netns, AFailingNodeStillRemovesEveryNamespace) {
  SKIP_UNLESS_NAMESPACES();
  TempDir dir;
  const auto spec = dir.file(
      "net.yaml", two_nodes("{kind: csv, path: " + dir.file("missing.csv") + "}"));
  Launcher launcher(dir, spec + " --netns --timeout 10 --quiet");
  const auto status = launcher.wait(60s);
  const std::string text = launcher.output();
  EXPECT_EQ(status, 1) << text;
  EXPECT_NE(text.find("missing.csv"), std::string::npos) << text;
  EXPECT_EQ(namespaces_of(launcher.pid()), std::vector<std::string>{}) << "left behind\n" << text;
}

TEST(Netns, SigintStopsTheNodesAndRemovesEveryNamespace) {
  SKIP_UNLESS_NAMESPACES();
  TempDir dir;
  // 1,000,000 tuples at 1000 per second: far longer than the test waits.
  const auto spec = dir.file("net.yaml", two_nodes("{rate: 1000, tuples: 1000000}"));
  const auto lines_path = dir.file("run.jsonl");
  Launcher launcher(dir, spec + " --netns --timeout 300 --quiet --json " + lines_path);
  ASSERT_EQ(wait_for_nodes(launcher).size(), 2u) << launcher.output();
  EXPECT_EQ(namespaces_of(launcher.pid()).size(), 3u);  // the hub and two nodes
  // The nodes are streaming: src's progress line counts tuples sent.
  EXPECT_TRUE(await_progress(lines_path, "src", "tuples_sent")) << launcher.output();
  ASSERT_EQ(::kill(launcher.pid(), SIGINT), 0);
  const auto status = launcher.wait(30s);
  const std::string text = launcher.output();
  ASSERT_TRUE(status.has_value()) << "still running 30 s after SIGINT\n" << text;
  EXPECT_NE(*status, 0) << text;
  EXPECT_NE(text.find("boreal launch: the launcher got SIGINT and stopped the nodes"),
            std::string::npos) << text;
  EXPECT_EQ(namespaces_of(launcher.pid()), std::vector<std::string>{}) << "left behind\n" << text;
  // The SIGTERM reached the nodes themselves (ip netns exec execs them): they reported.
  const auto lines = read_json_lines(lines_path);
  const json* sender = find_kind(lines, "node", "src");
  const json* receiver = find_kind(lines, "node", "dst");
  ASSERT_NE(sender, nullptr) << text;
  ASSERT_NE(receiver, nullptr) << text;
  EXPECT_GT((*sender)["tuples_sent"].get<std::uint64_t>(), 0u);
  EXPECT_LT((*sender)["tuples_sent"].get<std::uint64_t>(), 1000000u);
}

TEST(Netns, NamespacesOfAKilledLauncherAreRemovedByTheNextLaunch) {
  SKIP_UNLESS_NAMESPACES();
  // A PID that no process has any more: a child that has exited and been waited for.
  const pid_t gone = ::fork();
  if (gone == 0) ::_exit(0);
  ASSERT_GT(gone, 0);
  ::waitpid(gone, nullptr, 0);
  const std::string stale = "boreal-" + std::to_string(gone) + "-n0";
  ASSERT_EQ(run("ip netns add " + stale).status, 0);

  TempDir dir;
  const auto spec = dir.file("net.yaml", two_nodes("{rate: 1000, tuples: 10}"));
  Launcher launcher(dir, spec + " --netns --timeout 30 --quiet");
  const auto status = launcher.wait(60s);
  const std::string text = launcher.output();
  EXPECT_EQ(status, 0) << text;
  EXPECT_NE(text.find("boreal launch --netns: removed namespace " + stale + ", left by launcher " +
                      std::to_string(gone) + ", which is no longer running"),
            std::string::npos)
      << text;
  EXPECT_EQ(namespaces_of(gone), std::vector<std::string>{});
  EXPECT_EQ(namespaces_of(launcher.pid()), std::vector<std::string>{});
}

TEST(NetnsUsage, ALauncherThatIsNotRootIsToldSo) {
  TempDir dir;
  const auto spec = dir.file("net.yaml", two_nodes("{rate: 1000, tuples: 10}"));
  std::string as_user;  // runs what follows as an unprivileged user
  if (::geteuid() == 0) {
    if (boreal::runtime::find_tool("setpriv").empty()) {
      GTEST_SKIP() << "root, and no setpriv to drop it";
    }
    // The temporary directory is private to root; the unprivileged user must read the file.
    using std::filesystem::perms;
    std::filesystem::permissions(std::filesystem::path(spec).parent_path(),
                                 perms::owner_all | perms::group_read | perms::group_exec |
                                     perms::others_read | perms::others_exec);
    as_user = "setpriv --reuid=65534 --regid=65534 --clear-groups ";
    if (run(as_user + "test -x " + BOREAL_BIN + " -a -r " + spec).status != 0) {
      GTEST_SKIP() << "user 65534 cannot run " << BOREAL_BIN << " or read " << spec;
    }
  }
  const auto out = run(as_user + BOREAL_BIN + " launch " + spec + " --netns");
  EXPECT_EQ(out.status, 2) << out.text;
  EXPECT_EQ(out.text,
            "boreal launch --netns: needs root (network namespaces and veth pairs); run as root or "
            "drop --netns\n");
}

TEST(NetnsUsage, WhatIsMissingAndBadValuesGetClearErrors) {
  using boreal::runtime::netns_unavailable;
  EXPECT_EQ(netns_unavailable(1000, "/usr/sbin/ip"),
            "boreal launch --netns: needs root (network namespaces and veth pairs); run as root or "
            "drop --netns");
  EXPECT_EQ(netns_unavailable(0, ""),
            "boreal launch --netns: needs `ip` from iproute2, which is not on $PATH, /usr/sbin or "
            "/sbin; install iproute2 or drop --netns");
  EXPECT_EQ(netns_unavailable(0, "/usr/sbin/ip"), std::nullopt);
  EXPECT_EQ(boreal::runtime::netns_too_many_nodes(254), std::nullopt);
  EXPECT_EQ(boreal::runtime::netns_too_many_nodes(255),
            "boreal launch --netns: the network has 255 nodes; its address plan "
            "(198.18.0.1-198.18.0.254) has room for 254");

  EXPECT_EQ(boreal::runtime::parse_link_delay("500us").value(), std::chrono::microseconds(500));
  EXPECT_EQ(boreal::runtime::parse_link_delay("2ms").value(), std::chrono::microseconds(2000));
  EXPECT_EQ(boreal::runtime::parse_link_rate("1gbit").value(), 1'000'000'000u);
  EXPECT_EQ(boreal::runtime::parse_link_rate("2.5mbit").value(), 2'500'000u);

  TempDir dir;
  const auto spec = dir.file("net.yaml", two_nodes("{rate: 1000, tuples: 10}"));
  const std::string launch = std::string(BOREAL_BIN) + " launch " + spec;
  struct Case {
    std::string flags;
    std::string error;
  };
  for (const Case& c : std::vector<Case>{
           {"--netns --link-delay 2",
            "boreal launch --link-delay: expected a duration such as 500us or 2ms (digits, then "
            "us, ms or s), got '2'\n"},
           {"--netns --link-delay 0ms",
            "boreal launch --link-delay: must be between 1us and 10s, got '0ms'\n"},
           {"--netns --link-delay 11s",
            "boreal launch --link-delay: must be between 1us and 10s, got '11s'\n"},
           {"--netns --link-delay 1500ns",
            "boreal launch --link-delay: must be whole microseconds (tc's unit), got '1500ns'\n"},
           {"--netns --link-rate 10mb",
            "boreal launch --link-rate: expected a rate such as 100mbit or 1gbit (a number, then "
            "bit, kbit, mbit, gbit or tbit), got '10mb'\n"},
           {"--netns --link-rate 5bit",
            "boreal launch --link-rate: must be between 1kbit and 1tbit, got '5bit'\n"},
           {"--link-delay 2ms",
            "boreal launch --link-delay: needs --netns (it shapes the links between the nodes' "
            "namespaces)\n"},
           {"--link-rate 1gbit",
            "boreal launch --link-rate: needs --netns (it shapes the links between the nodes' "
            "namespaces)\n"},
           {"--netns --free-ports",
            "boreal launch --netns: drop --free-ports; every node has a namespace and an address "
            "of its own, where the port from the file is free\n"}}) {
    const auto out = run(launch + " " + c.flags);
    EXPECT_EQ(out.status, 2) << c.flags << ": " << out.text;
    EXPECT_EQ(out.text, c.error) << c.flags;
  }
}

}  // namespace
