#include <boreal/transport/cpu_meter.hpp>

#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace boreal::transport {
namespace {

using std::chrono::nanoseconds;
using namespace std::chrono_literals;

// As read on a 2-CPU VM (HZ 250, USER_HZ 100), trimmed after the first lines that follow.
constexpr std::string_view kProcStat =
    "cpu  12175 3 2462 457069 208 5 71 73 11 2\n"
    "cpu0 6047 0 1009 228943 13 0 22 34 0 0\n"
    "cpu1 6127 3 1453 228125 194 5 48 38 11 2\n"
    "intr 3145162 0 9 0 0 0 0 0 0 0 0 0 0 0 0 0\n"
    "ctxt 6048121\n"
    "btime 1718000000\n";

TEST(MachineCpu, ParsesEveryColumnToExactNanoseconds) {
  auto parsed = MachineCpu::parse(kProcStat, 100);
  ASSERT_TRUE(parsed) << parsed.error().describe();
  const MachineCpu& m = parsed.value();
  EXPECT_EQ(m.user, nanoseconds{121'750'000'000});
  EXPECT_EQ(m.nice, nanoseconds{30'000'000});
  EXPECT_EQ(m.system, nanoseconds{24'620'000'000});
  EXPECT_EQ(m.idle, nanoseconds{4'570'690'000'000});
  EXPECT_EQ(m.iowait, nanoseconds{2'080'000'000});
  EXPECT_EQ(m.irq, nanoseconds{50'000'000});
  EXPECT_EQ(m.softirq, nanoseconds{710'000'000});
  EXPECT_EQ(m.steal, nanoseconds{730'000'000});
  EXPECT_EQ(m.guest, nanoseconds{110'000'000});
  EXPECT_EQ(m.guest_nice, nanoseconds{20'000'000});
}

TEST(MachineCpu, TickRateThatDoesNotDivideASecondRoundsDownPerColumn) {
  // 10⁹/3 ns per tick: 1 tick → 333,333,333.3; 5 ticks → 1,666,666,666.7 (not 5 × 333,333,333).
  auto parsed = MachineCpu::parse("cpu 1 5 0 7\n", 3);
  ASSERT_TRUE(parsed) << parsed.error().describe();
  EXPECT_EQ(parsed.value().user, nanoseconds{333'333'333});
  EXPECT_EQ(parsed.value().nice, nanoseconds{1'666'666'666});
  EXPECT_EQ(parsed.value().system, nanoseconds{0});
  EXPECT_EQ(parsed.value().idle, nanoseconds{2'333'333'333});
}

TEST(MachineCpu, OlderKernelsWithFourColumnsLeaveTheRestZero) {
  auto parsed = MachineCpu::parse("cpu  10 20 30 40\ncpu0 10 20 30 40\n", 100);
  ASSERT_TRUE(parsed) << parsed.error().describe();
  MachineCpu expected;
  expected.user = 100ms;
  expected.nice = 200ms;
  expected.system = 300ms;
  expected.idle = 400ms;
  EXPECT_EQ(parsed.value(), expected);
}

TEST(MachineCpu, IgnoresColumnsAfterGuestNiceAndPerCpuLines) {
  // A per-CPU line before the aggregate one must not be taken for it.
  auto parsed = MachineCpu::parse("cpu0 9 9 9 9\ncpu\t1 2 3 4 5 6 7 8 9 10 11 12\r\n", 1);
  ASSERT_TRUE(parsed) << parsed.error().describe();
  EXPECT_EQ(parsed.value().user, 1s);
  EXPECT_EQ(parsed.value().guest_nice, 10s);
}

TEST(MachineCpu, MalformedTextNamesTheProblem) {
  struct Case {
    std::string_view text;
    std::string_view message;
  };
  const std::array<Case, 6> cases = {{
      {"", "/proc/stat: no aggregate 'cpu' line"},
      {"cpu0 1 2 3 4\nintr 5\n", "/proc/stat: no aggregate 'cpu' line"},
      {"cpu  1 2 3\n",
       "/proc/stat: cpu line has 3 columns, needs at least 4 (user nice system idle)"},
      {"cpu  1 2 x3 4\n", "/proc/stat: cpu column system is not a number: 'x3'"},
      {"cpu  1 -2 3 4\n", "/proc/stat: cpu column nice is not a number: '-2'"},
      {"cpu  1 2 3 99999999999999999999\n",
       "/proc/stat: cpu column idle is out of range: '99999999999999999999'"},
  }};
  for (const Case& c : cases) {
    auto parsed = MachineCpu::parse(c.text, 100);
    ASSERT_FALSE(parsed) << c.text;
    EXPECT_EQ(parsed.error().category, ErrorCategory::io);
    EXPECT_EQ(parsed.error().message, c.message);
  }
}

TEST(MachineCpu, NonPositiveTickRateIsAConfigError) {
  auto parsed = MachineCpu::parse(kProcStat, 0);
  ASSERT_FALSE(parsed);
  EXPECT_EQ(parsed.error().category, ErrorCategory::config);
  EXPECT_EQ(parsed.error().message, "/proc/stat: tick rate must be positive, got 0");
}

TEST(MachineCpu, SubtractsColumnByColumn) {
  auto before = MachineCpu::parse("cpu 1 2 3 4 5 6 7 8 9 10\n", 100);
  auto after = MachineCpu::parse("cpu 11 12 23 104 5 7 9 18 19 10\n", 100);
  ASSERT_TRUE(before && after);
  const MachineCpu d = after.value() - before.value();
  EXPECT_EQ(d.user, 100ms);
  EXPECT_EQ(d.nice, 100ms);
  EXPECT_EQ(d.system, 200ms);
  EXPECT_EQ(d.idle, 1000ms);
  EXPECT_EQ(d.iowait, 0ms);
  EXPECT_EQ(d.irq, 10ms);
  EXPECT_EQ(d.softirq, 20ms);
  EXPECT_EQ(d.steal, 100ms);
  EXPECT_EQ(d.guest, 100ms);
  EXPECT_EQ(d.guest_nice, 0ms);
}

TEST(MachineCpu, DifferenceStaysExactWhenTheIdleSumPassesTwoToTheSixtyThree) {
  // 9,223,372,037 s of idle is just past 2⁶³ ns: stored wrapped, the delta is still 1 s.
  auto before = MachineCpu::parse("cpu 0 0 0 9223372036\n", 1);
  auto after = MachineCpu::parse("cpu 0 0 0 9223372037\n", 1);
  ASSERT_TRUE(before && after);
  EXPECT_LT(after.value().idle.count(), 0);
  EXPECT_EQ((after.value() - before.value()).idle, 1s);
}

TEST(MachineCpu, SamplesThisMachine) {
  auto sampled = MachineCpu::sample();
  ASSERT_TRUE(sampled) << sampled.error().describe();
  EXPECT_GT(sampled.value().idle + sampled.value().user + sampled.value().system, 0ns);
}

MachineCpu idle_and_busy(nanoseconds user, nanoseconds nice, nanoseconds system,
                         nanoseconds idle, nanoseconds iowait, nanoseconds softirq) {
  MachineCpu m;
  m.user = user;
  m.nice = nice;
  m.system = system;
  m.idle = idle;
  m.iowait = iowait;
  m.softirq = softirq;
  m.irq = 10ms;
  m.steal = 20ms;
  return m;
}

TEST(MachineCpuReport, BusyIsCapacityMinusIdleAndIowait) {
  const MachineCpu before = idle_and_busy(10s, 1s, 5s, 100s, 2s, 1s);
  const MachineCpu after = idle_and_busy(11s, 1500ms, 7s, 103s, 3s, 1250ms);
  const MachineCpuReport r = make_machine_report(before, after, 2s, 4);
  EXPECT_DOUBLE_EQ(r.wall_s, 2.0);
  EXPECT_EQ(r.cpus, 4);
  EXPECT_DOUBLE_EQ(r.busy_cpu_s, 4.0);  // 2 s × 4 CPUs − (3 s idle + 1 s iowait)
  EXPECT_DOUBLE_EQ(r.idle_s, 4.0);
  EXPECT_DOUBLE_EQ(r.iowait_s, 1.0);
  EXPECT_DOUBLE_EQ(r.user_s, 1.5);
  EXPECT_DOUBLE_EQ(r.system_s, 2.0);
  EXPECT_DOUBLE_EQ(r.softirq_s, 0.25);
  EXPECT_DOUBLE_EQ(r.irq_s, 0.0);
  EXPECT_DOUBLE_EQ(r.steal_s, 0.0);
  EXPECT_DOUBLE_EQ(r.cores_used(), 2.0);
}

TEST(MachineCpuReport, BusyIsClampedToTheWindowsCapacity) {
  const MachineCpu before = idle_and_busy(0s, 0s, 0s, 100s, 10s, 0s);
  // More idle than the window holds (the reads lag its edges): busy is 0, not negative.
  const MachineCpuReport over =
      make_machine_report(before, idle_and_busy(0s, 0s, 0s, 109s, 10s, 0s), 2s, 4);
  EXPECT_DOUBLE_EQ(over.busy_cpu_s, 0.0);
  EXPECT_DOUBLE_EQ(over.idle_s, 9.0);
  // iowait stepping backwards: busy stops at 2 s × 4 CPUs; the breakdown keeps the raw delta.
  const MachineCpuReport back =
      make_machine_report(before, idle_and_busy(0s, 0s, 0s, 100s, 9s, 0s), 2s, 4);
  EXPECT_DOUBLE_EQ(back.busy_cpu_s, 8.0);
  EXPECT_DOUBLE_EQ(back.iowait_s, -1.0);
  // An empty window has no capacity and uses no cores.
  const MachineCpuReport empty = make_machine_report(before, before, 0s, 4);
  EXPECT_DOUBLE_EQ(empty.busy_cpu_s, 0.0);
  EXPECT_DOUBLE_EQ(empty.cores_used(), 0.0);
  EXPECT_DOUBLE_EQ(make_machine_report(before, before, 2s, -1).busy_cpu_s, 0.0);
}

TEST(CpuReport, DividesCpuByThroughputAndWall) {
  const CpuReport r = make_cpu_report(1'000'000, 64'000'000, 2s, 1s);
  EXPECT_TRUE(r.per_tuple_defined);
  EXPECT_TRUE(r.per_mb_defined);
  EXPECT_TRUE(r.cores_defined);
  EXPECT_DOUBLE_EQ(r.cpu_us_per_tuple, 1.0);
  EXPECT_DOUBLE_EQ(r.cpu_us_per_mb, 15'625.0);
  EXPECT_DOUBLE_EQ(r.cores_used, 0.5);
}

TEST(CpuReport, ZeroDenominatorsGiveZeroAndAFalseFlag) {
  const CpuReport none = make_cpu_report(0, 0, 0s, 1s);
  EXPECT_FALSE(none.per_tuple_defined);
  EXPECT_FALSE(none.per_mb_defined);
  EXPECT_FALSE(none.cores_defined);
  EXPECT_EQ(none.cpu_us_per_tuple, 0.0);
  EXPECT_EQ(none.cpu_us_per_mb, 0.0);
  EXPECT_EQ(none.cores_used, 0.0);
  // No CPU spent over a real window is defined and zero.
  const CpuReport idle = make_cpu_report(10, 10, 1s, 0s);
  EXPECT_TRUE(idle.per_tuple_defined && idle.per_mb_defined && idle.cores_defined);
  EXPECT_EQ(idle.cpu_us_per_tuple, 0.0);
  EXPECT_EQ(idle.cores_used, 0.0);
}

TEST(IrqTimeAccounting, ParsesTheThreeCases) {
  // The HAVE_ option says only that the architecture could do it.
  EXPECT_EQ(parse_irq_time_accounting("CONFIG_HAVE_IRQ_TIME_ACCOUNTING=y\n"
                                      "CONFIG_IRQ_TIME_ACCOUNTING=y\n"
                                      "CONFIG_HZ=250\n"),
            IrqTimeAccounting::on);
  EXPECT_EQ(parse_irq_time_accounting("CONFIG_TICK_CPU_ACCOUNTING=y\n"
                                      "# CONFIG_IRQ_TIME_ACCOUNTING is not set\n"
                                      "CONFIG_HAVE_IRQ_TIME_ACCOUNTING=y\n"),
            IrqTimeAccounting::off);
  // A config without the option (its dependencies are not met on this architecture).
  EXPECT_EQ(parse_irq_time_accounting("#\n# Automatically generated file; DO NOT EDIT.\n"
                                      "CONFIG_HAVE_IRQ_TIME_ACCOUNTING=y\n"
                                      "# CONFIG_VIRT_CPU_ACCOUNTING_GEN is not set\n"),
            IrqTimeAccounting::off);
  EXPECT_EQ(parse_irq_time_accounting(""), IrqTimeAccounting::unknown);
  EXPECT_EQ(parse_irq_time_accounting("not a kernel config\nIRQ_TIME_ACCOUNTING=y\n"),
            IrqTimeAccounting::unknown);
  EXPECT_EQ(to_string(IrqTimeAccounting::on), "on");
  EXPECT_EQ(to_string(IrqTimeAccounting::off), "off");
  EXPECT_EQ(to_string(IrqTimeAccounting::unknown), "unknown");
}

// The kernel config as an independent reader (gzip, zcat) sees it, or "" without one.
std::string kernel_config_via_shell() {
  utsname name{};
  if (::uname(&name) != 0) return {};
  const std::string boot = std::string{"/boot/config-"} + name.release;
  std::string command;
  if (::access(boot.c_str(), R_OK) == 0) {
    command = "cat '" + boot + "'";
  } else if (::access("/proc/config.gz", R_OK) == 0) {
    command = "zcat /proc/config.gz 2>/dev/null";
  } else {
    return {};
  }
  std::string text;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return {};
  std::array<char, 65536> chunk{};
  while (const std::size_t n = std::fread(chunk.data(), 1, chunk.size(), pipe)) {
    text.append(chunk.data(), n);
  }
  ::pclose(pipe);
  return text;
}

TEST(IrqTimeAccounting, ReadsTheRunningKernelsConfig) {
  const IrqTimeAccounting found = irq_time_accounting();
  EXPECT_EQ(kernel_has_irq_time_accounting(), found == IrqTimeAccounting::on);
  const std::string config = kernel_config_via_shell();
  if (config.empty()) GTEST_SKIP() << "no readable kernel config here; found " << to_string(found);
  EXPECT_EQ(found, parse_irq_time_accounting(config));
}

// Spins until the calling thread has used `amount` of CPU; false if that took over 10 s of
// wall time (a machine so loaded the test cannot say anything).
bool burn_cpu(nanoseconds amount) {
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  const nanoseconds start = ThreadCpu::now();
  volatile std::uint64_t sink = 0;
  while (ThreadCpu::now() - start < amount) {
    for (int i = 0; i < 1000; ++i) sink = sink + static_cast<std::uint64_t>(i);
    if (std::chrono::steady_clock::now() > deadline) return false;
  }
  return true;
}

TEST(ThreadCpu, GrowsMonotonicallyWhileTheThreadRuns) {
  const ProcessUsage process_before = ProcessUsage::sample();
  const ProcessUsage thread_before = ProcessUsage::sample_thread();
  const nanoseconds before = ThreadCpu::now();
  nanoseconds last = before;
  for (int i = 0; i < 1000; ++i) {
    const nanoseconds now = ThreadCpu::now();
    EXPECT_GE(now, last);
    last = now;
  }
  ASSERT_TRUE(burn_cpu(20ms));
  const nanoseconds used = ThreadCpu::now() - before;
  EXPECT_GE(used, 20ms);
  // The process and the thread totals contain this thread's CPU (getrusage truncates each of
  // user and system to a microsecond, hence the slack).
  const ProcessUsage process = ProcessUsage::sample() - process_before;
  const ProcessUsage thread = ProcessUsage::sample_thread() - thread_before;
  EXPECT_GE(process.total(), used - 1ms);
  EXPECT_GE(thread.total(), used - 1ms);
  EXPECT_GE(process.voluntary_switches, 0);
  EXPECT_GE(process.involuntary_switches, 0);
}

TEST(ThreadCpu, MeasuresOnlyTheCallingThread) {
  const nanoseconds before = ThreadCpu::now();
  nanoseconds other_used{0};
  std::thread other([&] {
    const nanoseconds start = ThreadCpu::now();
    if (burn_cpu(50ms)) other_used = ThreadCpu::now() - start;
  });
  other.join();
  ASSERT_GE(other_used, 50ms);
  // This thread only created and joined a thread: far less than the 50 ms burnt there.
  EXPECT_LT(ThreadCpu::now() - before, 25ms);
}

TEST(ProcessUsage, SubtractsFieldByField) {
  const ProcessUsage after{3s, 2s, 10, 4};
  const ProcessUsage before{1s, 500ms, 7, 4};
  const ProcessUsage d = after - before;
  EXPECT_EQ(d, (ProcessUsage{2s, 1500ms, 3, 0}));
  EXPECT_EQ(d.total(), 3500ms);
}

TEST(MachineWindow, ReportsAWindowOfTheWholeMachine) {
  auto window = MachineWindow::start();
  ASSERT_TRUE(window) << window.error().describe();
  EXPECT_GT(window.value().cpus(), 0);
  ASSERT_TRUE(burn_cpu(10ms));
  auto first = window.value().stop();
  ASSERT_TRUE(first) << first.error().describe();
  const MachineCpuReport& r = first.value();
  EXPECT_EQ(r.cpus, window.value().cpus());
  EXPECT_GT(r.wall_s, 0.0);
  EXPECT_GE(r.busy_cpu_s, 0.0);
  EXPECT_LE(r.busy_cpu_s, r.wall_s * r.cpus);
  // stop() leaves the window open: a second call reports a longer one.
  std::this_thread::sleep_for(2ms);
  auto second = window.value().stop();
  ASSERT_TRUE(second) << second.error().describe();
  EXPECT_GT(second.value().wall_s, r.wall_s);
}

// Field 14 (utime) is 250 ticks and 15 (stime) 50: 3 s at 100 Hz. Field 22 (starttime) 6807116.
constexpr const char* kStat =
    "10896 (my (odd) name) R 10892 10892 7092 0 -1 4194304 101 0 0 0 250 50 0 0 20 0 1 0 "
    "6807116 3133440 394 18446744073709551615 94033387233280 0\n";

TEST(ProcessCpu, ParsesPidParentNameCpuAndStart) {
  const auto p = ProcessCpu::parse(kStat, 100);
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->pid, 10896);
  EXPECT_EQ(p->parent_pid, 10892);
  EXPECT_EQ(p->comm, "my (odd) name");
  EXPECT_EQ(p->cpu, 3s);
  EXPECT_EQ(p->start_ticks, 6807116U);
  EXPECT_EQ(ProcessCpu::parse(kStat, 250)->cpu, 1200ms);
}

TEST(ProcessCpu, KernelThreadsAndMalformedTextAreLeftOut) {
  // kthreadd: flags 2129984 has PF_KTHREAD (0x00200000).
  EXPECT_FALSE(
      ProcessCpu::parse("2 (kthreadd) S 0 0 0 0 -1 2129984 0 0 0 0 0 1 0 0 20 0 1 0 25 0 0", 100));
  EXPECT_FALSE(ProcessCpu::parse("", 100));
  EXPECT_FALSE(ProcessCpu::parse("10896 (cat R 10892", 100));
  EXPECT_FALSE(
      ProcessCpu::parse("x (cat) R 10892 10892 7092 0 -1 0 0 0 0 0 1 1 0 0 20 0 1 0 5 0", 100));
  EXPECT_FALSE(
      ProcessCpu::parse("10896 (cat) R 10892 10892 7092 0 -1 0 0 0 0 0 1 1 0 0 20 0", 100));
  EXPECT_FALSE(
      ProcessCpu::parse("10896 (cat) R 10892 10892 7092 0 -1 0 0 0 0 0 1 z 0 0 20 0 1 0 5 0", 100));
  EXPECT_FALSE(ProcessCpu::parse(kStat, 0));
}

TEST(ProcessCpu, CensusSeesThisProcessAndNoKernelThread) {
  ASSERT_TRUE(burn_cpu(30ms));
  const auto all = ProcessCpu::census();
  const auto self =
      std::find_if(all.begin(), all.end(), [](const ProcessCpu& p) { return p.pid == ::getpid(); });
  ASSERT_NE(self, all.end());
  EXPECT_EQ(self->parent_pid, ::getppid());
  EXPECT_GE(self->cpu, 20ms);  // 30 ms burnt, in 10-ms ticks
  EXPECT_TRUE(std::none_of(all.begin(), all.end(), [](const ProcessCpu& p) { return p.pid == 2; }));
}

TEST(ProcessCpu, BetweenTwoCensusesCountsWhatEachUsedLargestFirst) {
  auto at = [](int pid, std::uint64_t start, nanoseconds cpu) {
    ProcessCpu p;
    p.pid = pid;
    p.start_ticks = start;
    p.cpu = cpu;
    return p;
  };
  const std::vector<ProcessCpu> before = {at(10, 1, 5s), at(11, 1, 2s), at(12, 1, 7s),
                                          at(13, 1, 1s)};
  // 10 used 300 ms; 11 used 5 ms (under the threshold); 12 is a new process on a reused pid
  // (another start): all its 400 ms count; 13 exited; 14 started: its 20 ms count.
  const std::vector<ProcessCpu> after = {at(10, 1, 5300ms), at(11, 1, 2005ms), at(12, 9, 400ms),
                                         at(14, 9, 20ms)};
  const auto used = process_cpu_between(before, after, 10ms);
  ASSERT_EQ(used.size(), 3U);
  EXPECT_EQ(used[0].pid, 12);
  EXPECT_EQ(used[0].cpu, 400ms);
  EXPECT_EQ(used[1].pid, 10);
  EXPECT_EQ(used[1].cpu, 300ms);
  EXPECT_EQ(used[2].pid, 14);
  EXPECT_EQ(used[2].cpu, 20ms);
}

TEST(MachineWindow, ListsTheProcessesThatRanInIt) {
  auto window = MachineWindow::start();
  ASSERT_TRUE(window) << window.error().describe();
  ASSERT_TRUE(burn_cpu(50ms));
  auto report = window.value().stop();
  ASSERT_TRUE(report) << report.error().describe();
  const auto& processes = report.value().processes;
  const auto self = std::find_if(processes.begin(), processes.end(),
                                 [](const ProcessCpu& p) { return p.pid == ::getpid(); });
  ASSERT_NE(self, processes.end());
  EXPECT_GE(self->cpu, 40ms);
  EXPECT_TRUE(
      std::is_sorted(processes.begin(), processes.end(),
                     [](const ProcessCpu& a, const ProcessCpu& b) { return a.cpu > b.cpu; }));
}

}  // namespace
}  // namespace boreal::transport
