#include <boreal/transport/cpu_meter.hpp>

#include <fcntl.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cassert>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <string>

#include "core/read_file.hpp"

namespace boreal::transport {
namespace {

constexpr std::uint64_t kNsPerSecond = 1'000'000'000;

std::chrono::nanoseconds from_timeval(const timeval& tv) noexcept {
  return std::chrono::seconds{tv.tv_sec} + std::chrono::microseconds{tv.tv_usec};
}

ProcessUsage from_rusage(const rusage& ru) noexcept {
  return {from_timeval(ru.ru_utime), from_timeval(ru.ru_stime), ru.ru_nvcsw, ru.ru_nivcsw};
}

ProcessUsage sample_usage(int who) noexcept {
  rusage ru{};
  // getrusage fails only for an invalid `who` or a bad pointer: neither can happen here.
  [[maybe_unused]] const int rc = ::getrusage(who, &ru);
  assert(rc == 0);
  return from_rusage(ru);
}

// floor(ticks · 10⁹ / hz) modulo 2⁶⁴, without an intermediate overflow: the quotient and the
// remainder are converted separately (remainder < hz, so remainder · 10⁹ fits easily).
// Wrapping keeps differences exact even once a many-CPU machine's idle sum passes 2⁶³ ns.
std::chrono::nanoseconds ticks_to_ns(std::uint64_t ticks, std::uint64_t hz) noexcept {
  const std::uint64_t ns = (ticks / hz) * kNsPerSecond + (ticks % hz) * kNsPerSecond / hz;
  return std::chrono::nanoseconds{static_cast<std::int64_t>(ns)};
}

// Modular difference: the inverse of the wrap in ticks_to_ns.
std::chrono::nanoseconds wrapping_sub(std::chrono::nanoseconds after,
                                      std::chrono::nanoseconds before) noexcept {
  const auto diff =
      static_cast<std::uint64_t>(after.count()) - static_cast<std::uint64_t>(before.count());
  return std::chrono::nanoseconds{static_cast<std::int64_t>(diff)};
}

constexpr std::array<const char*, 10> kColumnNames = {
    "user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal", "guest", "guest_nice"};

bool is_blank(char c) noexcept { return c == ' ' || c == '\t'; }

// The aggregate line: "cpu" followed by whitespace (not "cpu0", not "cpuX" of a later field).
std::string_view find_cpu_line(std::string_view text) noexcept {
  while (!text.empty()) {
    const auto eol = text.find('\n');
    const std::string_view line = text.substr(0, eol);
    if (line.size() > 3 && line.substr(0, 3) == "cpu" && is_blank(line[3])) return line;
    if (eol == std::string_view::npos) break;
    text.remove_prefix(eol + 1);
  }
  return {};
}

// Reads /proc/stat up to the end of its aggregate line: it comes first, and the rest
// (per-CPU lines, an "intr" line of thousands of counters on large machines) is not needed.
Result<std::string> read_proc_stat() {
  return detail::read_whole_file("/proc/stat", [](std::string_view text) {
    const std::string_view line = find_cpu_line(text);
    return !line.empty() && line.data() + line.size() < text.data() + text.size();
  });
}

// PF_KTHREAD in /proc/PID/stat's flags (include/linux/sched.h).
constexpr std::uint64_t kKernelThreadFlag = 0x00200000;

}  // namespace

std::optional<ProcessCpu> ProcessCpu::parse(std::string_view text, long ticks_per_second) {
  if (ticks_per_second <= 0) return std::nullopt;
  // "pid (comm) state ppid ...": comm may hold spaces and parentheses, so it ends at the
  // last ')'.
  const auto open = text.find(" (");
  const auto close = text.rfind(')');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open) {
    return std::nullopt;
  }
  ProcessCpu out;
  {
    const auto [ptr, ec] = std::from_chars(text.data(), text.data() + open, out.pid);
    if (ec != std::errc{} || ptr != text.data() + open || out.pid <= 0) return std::nullopt;
  }
  out.comm = std::string(text.substr(open + 2, close - open - 2));
  // Fields after comm, from field 3 (state): ppid is field 4, flags 9, utime 14, stime 15,
  // starttime 22 (proc(5)).
  std::string_view rest = text.substr(close + 1);
  std::array<std::uint64_t, 23> field{};
  for (int number = 3; number <= 22; ++number) {
    while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
    const auto end = std::min(rest.find(' '), rest.size());
    const std::string_view token = rest.substr(0, end);
    if (token.empty()) return std::nullopt;
    if (number != 3) {  // state is a letter
      std::int64_t value = 0;  // some fields (priority, nice) may be negative
      const auto [ptr, ec] = std::from_chars(token.data(), token.data() + token.size(), value);
      if (ec != std::errc{} || ptr != token.data() + token.size()) return std::nullopt;
      field[static_cast<std::size_t>(number)] = static_cast<std::uint64_t>(value);
    }
    rest.remove_prefix(end);
  }
  if ((field[9] & kKernelThreadFlag) != 0) return std::nullopt;
  out.parent_pid = static_cast<int>(field[4]);
  out.start_ticks = field[22];
  const auto hz = static_cast<std::uint64_t>(ticks_per_second);
  out.cpu = ticks_to_ns(field[14] + field[15], hz);
  return out;
}

std::vector<ProcessCpu> ProcessCpu::census() {
  std::vector<ProcessCpu> out;
  const long hz = ::sysconf(_SC_CLK_TCK);
  std::error_code ec;
  for (std::filesystem::directory_iterator it("/proc", ec), end; !ec && it != end;
       it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    const std::string path = "/proc/" + name + "/stat";
    const auto text = detail::read_whole_file(path.c_str());
    if (!text) continue;  // exited meanwhile
    if (auto process = parse(text.value(), hz)) out.push_back(std::move(*process));
  }
  return out;
}

std::vector<ProcessCpu> process_cpu_between(const std::vector<ProcessCpu>& before,
                                            const std::vector<ProcessCpu>& after,
                                            std::chrono::nanoseconds at_least) {
  std::vector<ProcessCpu> out;
  for (const ProcessCpu& now : after) {
    const auto was = std::find_if(before.begin(), before.end(), [&](const ProcessCpu& p) {
      return p.pid == now.pid && p.start_ticks == now.start_ticks;
    });
    ProcessCpu used = now;
    if (was != before.end()) used.cpu = std::max(std::chrono::nanoseconds{0}, now.cpu - was->cpu);
    if (used.cpu >= at_least && used.cpu.count() > 0) out.push_back(std::move(used));
  }
  std::sort(out.begin(), out.end(), [](const ProcessCpu& a, const ProcessCpu& b) {
    return a.cpu != b.cpu ? a.cpu > b.cpu : a.pid < b.pid;
  });
  return out;
}

std::chrono::nanoseconds ThreadCpu::now() noexcept {
  timespec ts{};
  // Fails only for an invalid clock id; this one exists on every Linux since 2.6.12.
  [[maybe_unused]] const int rc = ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  assert(rc == 0);
  return std::chrono::seconds{ts.tv_sec} + std::chrono::nanoseconds{ts.tv_nsec};
}

ProcessUsage ProcessUsage::sample() noexcept { return sample_usage(RUSAGE_SELF); }

ProcessUsage ProcessUsage::sample_thread() noexcept { return sample_usage(RUSAGE_THREAD); }

Result<MachineCpu> MachineCpu::sample() {
  auto text = read_proc_stat();
  if (!text) return text.error();
  return parse(text.value());
}

Result<MachineCpu> MachineCpu::parse(std::string_view proc_stat_text) {
  const long hz = ::sysconf(_SC_CLK_TCK);
  if (hz <= 0) {
    const int err = errno;
    return fail(ErrorCategory::io, err, "sysconf(_SC_CLK_TCK) gave no tick rate");
  }
  return parse(proc_stat_text, hz);
}

Result<MachineCpu> MachineCpu::parse(std::string_view proc_stat_text, long ticks_per_second) {
  if (ticks_per_second <= 0) {
    return fail(ErrorCategory::config, 0,
                "/proc/stat: tick rate must be positive, got " + std::to_string(ticks_per_second));
  }
  std::string_view line = find_cpu_line(proc_stat_text);
  if (line.empty()) return fail(ErrorCategory::io, 0, "/proc/stat: no aggregate 'cpu' line");
  line.remove_prefix(3);

  std::array<std::uint64_t, kColumnNames.size()> ticks{};
  std::size_t columns = 0;
  for (;;) {
    while (!line.empty() && (is_blank(line.front()) || line.front() == '\r')) line.remove_prefix(1);
    if (line.empty() || columns == ticks.size()) break;  // later columns are ignored
    std::size_t end = 0;
    while (end < line.size() && !is_blank(line[end]) && line[end] != '\r') ++end;
    const std::string_view token = line.substr(0, end);
    const char* const last = token.data() + token.size();
    const auto [ptr, ec] = std::from_chars(token.data(), last, ticks[columns]);
    if (ec == std::errc::result_out_of_range) {
      return fail(ErrorCategory::io, 0,
                  std::string{"/proc/stat: cpu column "} + kColumnNames[columns] +
                      " is out of range: '" + std::string{token} + "'");
    }
    if (ec != std::errc{} || ptr != last) {
      return fail(ErrorCategory::io, 0,
                  std::string{"/proc/stat: cpu column "} + kColumnNames[columns] +
                      " is not a number: '" + std::string{token} + "'");
    }
    ++columns;
    line.remove_prefix(end);
  }
  if (columns < 4) {
    return fail(ErrorCategory::io, 0,
                "/proc/stat: cpu line has " + std::to_string(columns) +
                    " columns, needs at least 4 (user nice system idle)");
  }

  const auto hz = static_cast<std::uint64_t>(ticks_per_second);
  MachineCpu out;
  const std::array<std::chrono::nanoseconds*, kColumnNames.size()> fields = {
      &out.user, &out.nice,    &out.system, &out.idle,  &out.iowait,
      &out.irq,  &out.softirq, &out.steal,  &out.guest, &out.guest_nice};
  for (std::size_t i = 0; i < columns; ++i) *fields[i] = ticks_to_ns(ticks[i], hz);
  return out;
}

MachineCpu operator-(const MachineCpu& after, const MachineCpu& before) noexcept {
  MachineCpu d;
  d.user = wrapping_sub(after.user, before.user);
  d.nice = wrapping_sub(after.nice, before.nice);
  d.system = wrapping_sub(after.system, before.system);
  d.idle = wrapping_sub(after.idle, before.idle);
  d.iowait = wrapping_sub(after.iowait, before.iowait);
  d.irq = wrapping_sub(after.irq, before.irq);
  d.softirq = wrapping_sub(after.softirq, before.softirq);
  d.steal = wrapping_sub(after.steal, before.steal);
  d.guest = wrapping_sub(after.guest, before.guest);
  d.guest_nice = wrapping_sub(after.guest_nice, before.guest_nice);
  return d;
}

MachineCpuReport make_machine_report(const MachineCpu& before, const MachineCpu& after,
                                     std::chrono::duration<double> wall, int cpus) noexcept {
  using Seconds = std::chrono::duration<double>;
  const MachineCpu d = after - before;
  MachineCpuReport r;
  r.wall_s = wall.count();
  r.cpus = cpus;
  r.user_s = Seconds{d.user + d.nice}.count();
  r.system_s = Seconds{d.system}.count();
  r.softirq_s = Seconds{d.softirq}.count();
  r.irq_s = Seconds{d.irq}.count();
  r.steal_s = Seconds{d.steal}.count();
  r.idle_s = Seconds{d.idle + d.iowait}.count();
  r.iowait_s = Seconds{d.iowait}.count();
  // A negative wall or CPU count is nonsense; treat it as an empty window rather than report
  // negative capacity.
  const double capacity = std::max(0.0, r.wall_s) * std::max(0, cpus);
  r.busy_cpu_s = std::clamp(capacity - r.idle_s, 0.0, capacity);
  return r;
}

Result<MachineWindow> MachineWindow::start() {
  const long online = ::sysconf(_SC_NPROCESSORS_ONLN);
  const int cpus = online > 0 ? static_cast<int>(online) : 1;
  auto processes = ProcessCpu::census();
  auto at_start = MachineCpu::sample();
  if (!at_start) return at_start.error();
  // The clock is read right after /proc/stat, as in stop(), so both edges lag their read by
  // the same amount; the processes are read just before it at both edges.
  return MachineWindow{std::chrono::steady_clock::now(), at_start.value(), std::move(processes),
                       cpus};
}

Result<MachineCpuReport> MachineWindow::stop() const {
  const auto processes = ProcessCpu::census();
  auto now = MachineCpu::sample();
  if (!now) return now.error();
  const auto wall = std::chrono::steady_clock::now() - started_;
  MachineCpuReport report = make_machine_report(at_start_, now.value(), wall, cpus_);
  report.processes =
      process_cpu_between(processes_at_start_, processes, std::chrono::milliseconds{1});
  return report;
}

CpuReport make_cpu_report(std::uint64_t tuples, std::uint64_t bytes,
                          std::chrono::duration<double> wall,
                          std::chrono::duration<double> cpu) noexcept {
  assert(cpu.count() >= 0 && wall.count() >= 0);
  const double cpu_us = cpu.count() * 1e6;
  CpuReport r;
  if (tuples > 0) {
    r.cpu_us_per_tuple = cpu_us / static_cast<double>(tuples);
    r.per_tuple_defined = true;
  }
  if (bytes > 0) {
    r.cpu_us_per_mb = cpu_us / (static_cast<double>(bytes) / 1e6);
    r.per_mb_defined = true;
  }
  if (wall.count() > 0) {
    r.cores_used = cpu.count() / wall.count();
    r.cores_defined = true;
  }
  return r;
}

}  // namespace boreal::transport
