// The machine's CPU split into a run's and other people's (docs/measurement.md §2):
// machine_share(), set_machine_figures(), their JSON and text.
#include <chrono>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "runtime/node_report.hpp"

namespace boreal::runtime {
namespace {

using namespace std::chrono_literals;

transport::ProcessCpu process(int pid, int parent, const char* comm, std::chrono::nanoseconds cpu) {
  transport::ProcessCpu p;
  p.pid = pid;
  p.parent_pid = parent;
  p.comm = comm;
  p.cpu = cpu;
  return p;
}

NodeReport node(const char* name, int pid, int parent, const char* host) {
  NodeReport r;
  r.node = name;
  r.pid = pid;
  r.parent_pid = parent;
  r.host = host;
  return r;
}

// A 2-s window of a 2-CPU machine, 2.6 CPU-s busy: the two nodes (101, 102), their launcher
// (100), a burner (300: 2 s, a whole core), a shell (1: init adopts; never "the run") and a
// process on another host's node with the same pid as the burner.
transport::MachineCpuReport window() {
  transport::MachineCpuReport m;
  m.wall_s = 2.0;
  m.cpus = 2;
  m.busy_cpu_s = 2.6;
  m.processes = {process(300, 1, "burner", 2000ms), process(101, 100, "boreal", 300ms),
                 process(102, 100, "boreal", 200ms), process(100, 50, "boreal", 20ms),
                 process(400, 1, "sshd", 20ms)};
  return m;
}

TEST(MachineShare, LeavesOutEveryUserProcessOutsideTheRun) {
  const auto m = window();
  const NodeReport src = node("src", 101, 100, "vm");
  const NodeReport dst = node("dst", 102, 100, "vm");
  const MachineShare share = machine_share(m, {&src, &dst}, "vm");
  EXPECT_DOUBLE_EQ(share.raw_s, 2.6);
  EXPECT_NEAR(share.other_s, 2.02, 1e-9);  // burner and sshd; the launcher is the run's
  EXPECT_NEAR(share.run_s, 0.58, 1e-9);
  ASSERT_EQ(share.others.size(), 2U);
  EXPECT_EQ(share.others[0].comm, "burner");
  EXPECT_EQ(share.others[1].comm, "sshd");
  // A node on another host names a pid of that host: the burner here is not the run's.
  const NodeReport remote = node("far", 300, 299, "other-host");
  EXPECT_NEAR(machine_share(m, {&src, &dst, &remote}, "vm").other_s, 2.02, 1e-9);
  // Nodes whose launcher died have init (pid 1) for a parent: init does not become the
  // run's, and the launcher, no parent of theirs now, is other load.
  auto with_init = m;
  with_init.processes.push_back(process(1, 0, "systemd", 40ms));
  const NodeReport orphan_src = node("src", 101, 1, "vm");
  const NodeReport orphan_dst = node("dst", 102, 1, "vm");
  EXPECT_NEAR(machine_share(with_init, {&orphan_src, &orphan_dst}, "vm").other_s,
              2.02 + 0.02 + 0.04, 1e-9);
  // More other load than busy time (the two reads are not simultaneous): never negative.
  auto busy_low = m;
  busy_low.busy_cpu_s = 1.0;
  EXPECT_EQ(machine_share(busy_low, {&src, &dst}, "vm").run_s, 0.0);
}

TEST(MachineShare, SetsTheFiguresAndMarksOtherLoadContaminated) {
  const auto m = window();
  const NodeReport src = node("src", 101, 100, "vm");
  const NodeReport dst = node("dst", 102, 100, "vm");
  RunSummary s;
  s.tuples_measured = 200000;
  set_machine_figures(s, m, machine_share(m, {&src, &dst}, "vm"));
  EXPECT_NEAR(s.cpu_us_per_tuple_machine, 0.58e6 / 200000, 1e-9);
  EXPECT_NEAR(s.cpu_us_per_tuple_machine_raw, 2.6e6 / 200000, 1e-9);
  EXPECT_NEAR(s.cores_machine, 0.29, 1e-9);
  EXPECT_NEAR(s.cores_machine_raw, 1.3, 1e-9);
  EXPECT_NEAR(s.other_cores, 1.01, 1e-9);
  EXPECT_TRUE(s.contaminated);
  EXPECT_EQ(s.other_processes,
            (std::vector<std::string>{"burner (300) 1.00 cores", "sshd (400) 0.01 cores"}));
  EXPECT_EQ(
      other_load_text(s),
      "other processes used 1.01 cores (burner (300) 1.00 cores, sshd (400) 0.01 cores), left "
      "out of the machine figures; with them: 13.000 CPU-us per tuple, 1.30 cores (contaminated)");
  const auto json = to_json(s);
  EXPECT_NEAR(json["cpu_us_per_tuple"]["machine_raw"].get<double>(), 13.0, 1e-9);
  EXPECT_NEAR(json["cores_used"]["other"].get<double>(), 1.01, 1e-9);
  EXPECT_EQ(json["contaminated"], true);

  // 0.05 cores is the line: at it, not contaminated; above it, contaminated.
  auto quiet = m;
  quiet.processes = {process(101, 100, "boreal", 300ms), process(400, 1, "sshd", 100ms)};
  RunSummary q;
  set_machine_figures(q, quiet, machine_share(quiet, {&src, &dst}, "vm"));
  EXPECT_NEAR(q.other_cores, 0.05, 1e-12);
  EXPECT_FALSE(q.contaminated);
  quiet.processes[1].cpu = 101ms;
  set_machine_figures(q, quiet, machine_share(quiet, {&src, &dst}, "vm"));
  EXPECT_TRUE(q.contaminated);
}

TEST(MachineShare, NodeReportsKeepTheirProcessAndTheWindowsProcesses) {
  NodeReport r = node("dst", 102, 100, "vm");
  r.machine = window();
  r.latency_stages = {{"check", "arrived_to_read", {2.5, 6.0, 40.0, 90.0, 1200, 0}}};
  const auto back = node_report_from_json(to_json(r));
  ASSERT_TRUE(back) << back.error().describe();
  ASSERT_EQ(back.value().latency_stages.size(), 1U);
  EXPECT_EQ(back.value().latency_stages[0].box, "check");
  EXPECT_EQ(back.value().latency_stages[0].stage, "arrived_to_read");
  EXPECT_EQ(back.value().latency_stages[0].latency.p99_us, 6.0);
  EXPECT_EQ(back.value().latency_stages[0].latency.samples, 1200U);
  EXPECT_EQ(back.value().pid, 102);
  EXPECT_EQ(back.value().parent_pid, 100);
  EXPECT_EQ(back.value().host, "vm");
  ASSERT_TRUE(back.value().machine.has_value());
  const auto& processes = back.value().machine->processes;
  ASSERT_EQ(processes.size(), 5U);
  EXPECT_EQ(processes[0].pid, 300);
  EXPECT_EQ(processes[0].parent_pid, 1);
  EXPECT_EQ(processes[0].comm, "burner");
  EXPECT_EQ(processes[0].cpu, 2000ms);
}

}  // namespace
}  // namespace boreal::runtime
