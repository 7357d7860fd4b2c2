// CPU accounting: what a thread, this process and the whole machine spent over a window,
// and the derived per-throughput figures (docs/design.md "CPU accounting and metrics").
//
// Everything here is a small value type with a sample function and a difference operator;
// there is no global state. Take a sample before and after the same wall-clock window and
// subtract. All functions may be called from any thread; they read the calling thread's or
// the process's clocks, or /proc, and share nothing.
//
// Cost and blocking (bench/cpu_meter_bench.cpp measures them): ThreadCpu::now() and
// ProcessUsage::sample() are single non-blocking syscalls (the vDSO does not serve
// CLOCK_THREAD_CPUTIME_ID) and fit a per-batch path. MachineCpu::sample() opens and reads
// /proc/stat (a few µs to tens of µs): call it at window edges, not per batch.
// irq_time_accounting() reads the kernel config file, possibly decompressing it: call it
// once per run.
//
// Which figure to trust (docs/transport-notes.md §4):
// - Thread and process CPU are exact as sums: the scheduler adds up nanoseconds of run
//   time. getrusage's user/system *split* is tick-sampled; only user + system is exact.
// - /proc/stat's busy columns (user, system, softirq, ...) are tick-sampled (HZ 250 on the
//   reference VM accounted 7.42 of 8.00 busy CPU-s). Its idle and iowait columns come from
//   the NO_HZ idle clock and are exact, so machine busy time is wall × CPUs − idle.
// - On kernels without CONFIG_IRQ_TIME_ACCOUNTING (the reference VM), softirq work that
//   runs inline is billed to whichever task was interrupted, i.e. it is already inside the
//   processes' system time. Show /proc/stat softirq as a breakdown; never add it to
//   per-process CPU, or it is counted twice.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <boreal/transport/error.hpp>

namespace boreal::transport {

// CPU time consumed by the calling thread (CLOCK_THREAD_CPUTIME_ID): user + system, exact
// to the scheduler's nanosecond accounting. Non-blocking; measures only the caller, so an
// I/O thread samples itself.
struct ThreadCpu {
  [[nodiscard]] static std::chrono::nanoseconds now() noexcept;
};

// getrusage(2) of this process (all its threads, live and joined) or of the calling
// thread, at getrusage's microsecond resolution. user and system are tick-sampled as a
// split; only total() is exact. Context switches: voluntary = the task blocked (a wait, a
// blocking read), involuntary = it was preempted. Non-blocking.
struct ProcessUsage {
  std::chrono::nanoseconds user{0};
  std::chrono::nanoseconds system{0};
  std::int64_t voluntary_switches = 0;
  std::int64_t involuntary_switches = 0;

  // RUSAGE_SELF: the whole process.
  [[nodiscard]] static ProcessUsage sample() noexcept;
  // RUSAGE_THREAD: the calling thread only (same fields; useful for an I/O thread's
  // context switches, which CLOCK_THREAD_CPUTIME_ID does not count).
  [[nodiscard]] static ProcessUsage sample_thread() noexcept;

  // user + system: the only exact figure.
  [[nodiscard]] std::chrono::nanoseconds total() const noexcept { return user + system; }

  friend ProcessUsage operator-(const ProcessUsage& after, const ProcessUsage& before) noexcept {
    return {after.user - before.user, after.system - before.system,
            after.voluntary_switches - before.voluntary_switches,
            after.involuntary_switches - before.involuntary_switches};
  }
  friend bool operator==(const ProcessUsage&, const ProcessUsage&) = default;
};

// The aggregate "cpu" line of /proc/stat, summed over all CPUs since boot, each column
// converted from USER_HZ ticks to nanoseconds. guest and guest_nice are already included
// in user and nice by the kernel; they are kept for display only. See the header comment
// for which columns are exact.
//
// Values are kept modulo 2⁶⁴ ns: the idle sum of a many-CPU host can pass 2⁶³ ns (292
// CPU-years, about 1.1 years of uptime on 256 CPUs) and then reads negative, but operator-
// subtracts modulo 2⁶⁴, so a window's differences stay exact across the wrap.
struct MachineCpu {
  std::chrono::nanoseconds user{0};
  std::chrono::nanoseconds nice{0};
  std::chrono::nanoseconds system{0};
  std::chrono::nanoseconds idle{0};
  std::chrono::nanoseconds iowait{0};
  std::chrono::nanoseconds irq{0};
  std::chrono::nanoseconds softirq{0};
  std::chrono::nanoseconds steal{0};
  std::chrono::nanoseconds guest{0};
  std::chrono::nanoseconds guest_nice{0};

  // Reads /proc/stat (only up to the end of its aggregate line). An io error (with the path
  // and errno) when it cannot be read; an io error naming the problem when its cpu line
  // does not parse. Blocks for the read only (no sleeping).
  [[nodiscard]] static Result<MachineCpu> sample();
  // Parses /proc/stat text with the running system's USER_HZ (sysconf(_SC_CLK_TCK)).
  [[nodiscard]] static Result<MachineCpu> parse(std::string_view proc_stat_text);
  // Parses with an explicit tick rate, for tests and for files recorded on another host.
  // Looks for the line that starts with "cpu" plus whitespace; needs at least the four
  // columns user nice system idle (older kernels have fewer than ten; missing ones are 0)
  // and ignores columns after guest_nice. A tick converts to 10⁹/ticks_per_second ns,
  // rounded down per column. Errors: io, naming the problem (no "cpu" line, fewer than four
  // columns, a column that is not an unsigned 64-bit number); config for ticks_per_second ≤ 0.
  [[nodiscard]] static Result<MachineCpu> parse(std::string_view proc_stat_text,
                                                long ticks_per_second);

  friend MachineCpu operator-(const MachineCpu& after, const MachineCpu& before) noexcept;
  friend bool operator==(const MachineCpu&, const MachineCpu&) = default;
};

// One user-space process's CPU, from /proc/PID/stat: utime + stime cover every thread the
// process has had, and the kernel scales them so their sum is the scheduler's exact run time
// (only the unit, USER_HZ ticks, is coarse). /proc/PID/schedstat would be finer but covers one
// thread. Used to tell a run's own CPU from other people's on a shared host
// (docs/measurement.md §2).
struct ProcessCpu {
  int pid = 0;
  int parent_pid = 0;
  std::uint64_t start_ticks = 0;  // when it started, in ticks since boot: a pid reused in a
                                  // window is a new process
  std::string comm;               // its name, as the kernel keeps it (at most 15 bytes)
  std::chrono::nanoseconds cpu{0};

  // Parses one /proc/PID/stat text. nullopt when it does not parse or is a kernel thread
  // (PF_KTHREAD in its flags): kernel threads work for every process, and stay in the
  // machine's figure.
  [[nodiscard]] static std::optional<ProcessCpu> parse(std::string_view proc_pid_stat_text,
                                                       long ticks_per_second);
  // Every user-space process's, from /proc/[0-9]*/stat; processes that exit while it reads
  // are skipped. Costs a few hundred microseconds per hundred processes: for a window's
  // edges, never per tuple.
  [[nodiscard]] static std::vector<ProcessCpu> census();
};

// What each process of `after` used since `before`, largest first, leaving out those under
// `at_least`. A pid that is not in `before`, or is there with another start time, started
// inside the window: all its CPU counts. A process that exited inside the window is not seen.
[[nodiscard]] std::vector<ProcessCpu> process_cpu_between(const std::vector<ProcessCpu>& before,
                                                          const std::vector<ProcessCpu>& after,
                                                          std::chrono::nanoseconds at_least);

// What the machine did over one wall-clock window. All fields in CPU-seconds except
// wall_s (seconds) and cpus.
struct MachineCpuReport {
  double wall_s = 0;    // length of the window
  int cpus = 0;         // online CPUs
  double busy_cpu_s = 0;  // wall_s × cpus − (idle + iowait), clamped to [0, wall_s × cpus]
  // Breakdown from the tick-sampled columns: informative, does not add up to busy_cpu_s.
  double user_s = 0;  // user + nice
  double system_s = 0;
  double softirq_s = 0;
  double irq_s = 0;
  // Time the hypervisor ran something else while a vCPU was runnable. It is not idle, so
  // it is inside busy_cpu_s; subtract it to get the CPU this guest actually used.
  double steal_s = 0;
  double idle_s = 0;    // idle + iowait (exact)
  double iowait_s = 0;  // the iowait part of idle_s
  // The user-space processes that ran in the window (at least a millisecond each), with what
  // each used: busy_cpu_s minus those that are not part of a run is that run's machine CPU.
  std::vector<ProcessCpu> processes;

  // busy_cpu_s / wall_s; 0 for an empty window.
  [[nodiscard]] double cores_used() const noexcept {
    return wall_s > 0 ? busy_cpu_s / wall_s : 0.0;
  }
};

// The pure arithmetic behind MachineWindow: busy = wall × cpus − Δ(idle + iowait).
// The sum of the busy columns is not used because it is tick-sampled and undercounts
// (docs/transport-notes.md §4). The result is clamped to [0, wall × cpus]: iowait is known to
// step backwards, and the two /proc/stat reads are not exactly at the window's edges. A
// negative wall or cpus counts as no capacity (busy 0). The breakdown fields are the raw
// deltas, not clamped.
[[nodiscard]] MachineCpuReport make_machine_report(const MachineCpu& before,
                                                   const MachineCpu& after,
                                                   std::chrono::duration<double> wall,
                                                   int cpus) noexcept;

// A wall-clock window over the whole machine: start() records the steady clock, the online
// CPU count (sysconf(_SC_NPROCESSORS_ONLN)), /proc/stat and every user process's CPU
// (ProcessCpu::census()); stop() samples again and reports. stop() leaves the window as it
// was, so calling it again reports a longer window. A value type; any thread may call
// stop(). Each call reads /proc/stat once and every /proc/PID/stat once.
class MachineWindow {
 public:
  [[nodiscard]] static Result<MachineWindow> start();
  [[nodiscard]] Result<MachineCpuReport> stop() const;

  [[nodiscard]] int cpus() const noexcept { return cpus_; }

 private:
  MachineWindow(std::chrono::steady_clock::time_point started, MachineCpu at_start,
                std::vector<ProcessCpu> processes_at_start, int cpus) noexcept
      : started_(started), at_start_(at_start), processes_at_start_(std::move(processes_at_start)),
        cpus_(cpus) {}

  std::chrono::steady_clock::time_point started_;
  MachineCpu at_start_;
  std::vector<ProcessCpu> processes_at_start_;
  int cpus_ = 1;
};

// Whether the running kernel moves IRQ and softirq time out of tasks
// (CONFIG_IRQ_TIME_ACCOUNTING). off: softirq is already inside processes' system time
// (the reference VM) — never add it again. on: it appears only in /proc/stat's irq and
// softirq columns, and per-process CPU misses the network stack's softirq work. unknown:
// no readable kernel config.
enum class IrqTimeAccounting : std::uint8_t { on, off, unknown };

[[nodiscard]] std::string_view to_string(IrqTimeAccounting value) noexcept;

// Looks up CONFIG_IRQ_TIME_ACCOUNTING in /boot/config-$(uname -r); when that file is
// missing or says nothing (unknown), in /proc/config.gz (CONFIG_IKCONFIG_PROC). The .gz file
// is read through libz.so.1 loaded at run time (dlopen), so boreal has no link-time zlib
// dependency; without libz it is unknown. Blocks on file reads and decompression (about a
// millisecond): call once per run. On x86 the option can still be disabled at boot
// (tsc=noirqtime, unstable TSC); that is not detected.
[[nodiscard]] IrqTimeAccounting irq_time_accounting();
// irq_time_accounting() == on.
[[nodiscard]] bool kernel_has_irq_time_accounting();
// The pure part: "CONFIG_IRQ_TIME_ACCOUNTING=y" → on; "# ... is not set", or a kernel
// config (it has CONFIG_ lines) that lacks the option because the architecture cannot do
// it → off; anything else → unknown.
[[nodiscard]] IrqTimeAccounting parse_irq_time_accounting(std::string_view kernel_config);

// Per-throughput figures for one party (a sender, a receiver, the machine) over one run.
// A zero denominator gives 0 and a false *_defined flag, never NaN or infinity.
// MB is 10⁶ bytes, as in the run summary's mb_per_s.
struct CpuReport {
  double cpu_us_per_tuple = 0;
  double cpu_us_per_mb = 0;
  double cores_used = 0;  // cpu / wall
  bool per_tuple_defined = false;  // false when no tuple was counted
  bool per_mb_defined = false;     // false when no byte was counted
  bool cores_defined = false;      // false when the wall window is empty
};

// cpu and wall must be ≥ 0 (asserted).
[[nodiscard]] CpuReport make_cpu_report(std::uint64_t tuples, std::uint64_t bytes,
                                        std::chrono::duration<double> wall,
                                        std::chrono::duration<double> cpu) noexcept;

}  // namespace boreal::transport
