#include "loopstudy/loop_study.hpp"

#include <algorithm>
#include <cmath>
#include <memory>
#include <thread>
#include <utility>

#include <boreal/transport/cpu_meter.hpp>

#include "loopstudy/loops.hpp"
#include "loopstudy/recv_core.hpp"
#include "loopstudy/send_core.hpp"

namespace boreal::runtime::loopstudy {
namespace {

using transport::ErrorCategory;
using transport::fail;
using transport::Result;

enum class Kind { rearm, lazy, edge, uring, recycled, thread_per_link, sigio };

constexpr int kMaxLinks = 64;
constexpr std::uint32_t kMaxBatchBytes = 16u << 20;
constexpr std::int64_t kGiveUpAfterNs = 10'000'000'000;

struct Entry {
  Kind kind;
  StrategyInfo info;
};

const std::vector<Entry>& table() {
  static const std::vector<Entry> entries{
      {Kind::rearm,
       {"epoll-rearm",
        "epoll with write interest (EPOLLOUT) registered before every send and removed after "
        "it, two epoll_ctl per send as in a reactor of one-shot write events; the receiver "
        "is level-triggered and registered once."}},
      {Kind::lazy,
       {"epoll-lazy",
        "epoll with write interest kept while a link has data to send and dropped only after "
        "8 idle loop iterations (FlexPoll's lazy interest), which saves most epoll_ctl calls; "
        "level-triggered receiver."}},
      {Kind::edge,
       {"epoll-et",
        "epoll with every socket registered once for EPOLLIN|EPOLLOUT|EPOLLET, speculative "
        "sends and reads drained until EAGAIN: no epoll_ctl in steady state (Boost.Asio's "
        "reactor works this way)."}},
      {Kind::uring,
       {"uring-batched",
        "io_uring one-shot polls (IORING_OP_POLL_ADD) whose re-arms are collected during a "
        "loop iteration and submitted with the wait in one io_uring_enter, like the batched "
        "updates of AIX's pollset."}},
      {Kind::recycled,
       {"recycled",
        "epoll-et plus per-connection buffers and frame state taken from a free list when a "
        "connection (re)opens instead of being allocated, which matters when links reconnect."}},
      {Kind::thread_per_link,
       {"thread-per-link",
        "one sender and one receiver thread per link doing blocking send and recv, with no "
        "event loop."}},
      {Kind::sigio,
       {"sigio",
        "signal-driven I/O: O_ASYNC sockets queue SIGRTMIN to their owning thread "
        "(F_SETOWN_EX), which takes it with sigtimedwait and drains the socket with "
        "non-blocking recv."}},
  };
  return entries;
}

Result<Kind> find_kind(const std::string& name) {
  std::string valid;
  for (const auto& entry : table()) {
    if (entry.info.name == name) return entry.kind;
    valid += (valid.empty() ? "" : ", ") + entry.info.name;
  }
  return fail(ErrorCategory::config, 0,
              "unknown loop-study strategy '" + name + "' (valid: " + valid + ")");
}

Result<void> validate(const StudyConfig& c) {
  auto bad = [](std::string message) {
    return fail(ErrorCategory::config, 0, "loop study: " + std::move(message));
  };
  if (!(c.rate >= 0) || !std::isfinite(c.rate)) {
    return bad("rate must be a finite number >= 0 tuples/s");
  }
  if (c.tuple_bytes < 16) return bad("tuple_bytes must be >= 16 (sequence and timestamp)");
  if (c.batch_bytes < c.tuple_bytes || c.batch_bytes > kMaxBatchBytes) {
    return bad("batch_bytes must lie between tuple_bytes and 16 MiB");
  }
  if (c.flush.count() < 0) return bad("flush must be >= 0");
  if (c.duration.count() <= 0) return bad("duration must be > 0");
  if (c.links < 1 || c.links > kMaxLinks) return bad("links must lie in 1..64");
  return transport::success();
}

// One end's body on its own thread. The thread closes its own sockets before it ends
// (sigio: no signal may outlive the thread that owns the socket).
template <class Core, class Body>
std::thread start_end(Core& core, Result<void>& result, StudyControl& control, Body body) {
  return std::thread([&core, &result, &control, body] {
    result = body(core);
    core.close_all();
    if (!result) control.abort.store(true);
  });
}

}  // namespace

const std::vector<StrategyInfo>& strategies() {
  static const std::vector<StrategyInfo> infos = [] {
    std::vector<StrategyInfo> out;
    for (const auto& entry : table()) out.push_back(entry.info);
    return out;
  }();
  return infos;
}

Result<StudyResult> run_study(const StudyConfig& config) {
  auto kind = find_kind(config.strategy);
  if (!kind) return kind.error();
  if (auto ok = validate(config); !ok) return ok.error();
  if (kind.value() == Kind::uring) {
    if (auto ok = uring_available(); !ok) return ok.error();
  }

  StudyShape shape;
  shape.rate = config.rate;
  const double duration_s = std::chrono::duration<double>(config.duration).count();
  shape.total_tuples =
      config.rate > 0 ? static_cast<std::uint64_t>(std::llround(config.rate * duration_s)) : 0;
  shape.tuple_bytes = config.tuple_bytes;
  shape.tuples_per_frame = config.batch_bytes / config.tuple_bytes;
  shape.frame_max_bytes = static_cast<std::uint32_t>(transport::kFrameHeaderBytes) +
                          shape.tuples_per_frame * config.tuple_bytes;
  shape.flush_ns = std::chrono::nanoseconds(config.flush).count();
  shape.reconnect_every = config.reconnect_every;
  shape.links = config.links;

  const bool per_link = kind.value() == Kind::thread_per_link;
  const bool recycle = kind.value() == Kind::recycled;
  std::vector<std::vector<int>> groups;
  if (per_link) {
    for (int l = 0; l < config.links; ++l) groups.push_back({l});
  } else {
    groups.emplace_back();
    for (int l = 0; l < config.links; ++l) groups.back().push_back(l);
  }

  // Set-up, on this thread: listeners, then each link's first connection.
  std::vector<std::unique_ptr<RecvCore>> receivers;
  std::vector<sockaddr_in> addresses(static_cast<std::size_t>(config.links));
  for (const auto& group : groups) {
    receivers.push_back(std::make_unique<RecvCore>(shape, group, per_link, recycle));
    if (auto ok = receivers.back()->listen(); !ok) return ok.error();
    for (const auto& link : receivers.back()->links()) {
      addresses[static_cast<std::size_t>(link.index)] = link.address;
    }
  }
  std::vector<std::unique_ptr<SendCore>> senders;
  for (std::size_t g = 0; g < groups.size(); ++g) {
    senders.push_back(std::make_unique<SendCore>(shape, groups[g], addresses, per_link, recycle));
    for (std::size_t i = 0; i < groups[g].size(); ++i) {
      auto& send_link = senders[g]->links()[i];
      auto& recv_link = receivers[g]->links()[i];
      if (auto ok = senders[g]->connect(send_link); !ok) return ok.error();
      auto accepted = receivers[g]->accept(recv_link);
      if (!accepted) return accepted.error();
      if (!accepted.value()) {
        return fail(ErrorCategory::io, 0,
                    "link " + std::to_string(recv_link.index) + ": connected but not accepted");
      }
    }
    senders[g]->end_warmup();
    receivers[g]->end_warmup();
  }

  auto window = transport::MachineWindow::start();
  if (!window) return window.error();
  const auto usage_before = transport::ProcessUsage::sample();
  StudyControl control;
  shape.start_ns = now_ns();
  shape.end_ns = shape.start_ns + std::chrono::nanoseconds(config.duration).count();
  control.give_up_ns = shape.end_ns + kGiveUpAfterNs;

  std::uint64_t epoll_ctl_saved = 0;
  std::vector<Result<void>> results(2 * groups.size(), Result<void>{transport::success()});
  std::vector<std::thread> threads;
  for (std::size_t g = 0; g < groups.size(); ++g) {
    auto& send_result = results[2 * g];
    auto& recv_result = results[2 * g + 1];
    const Kind k = kind.value();
    threads.push_back(start_end(*receivers[g], recv_result, control, [k, &control](RecvCore& core) {
      switch (k) {
        case Kind::rearm: return run_epoll_receiver(EpollMode::rearm, core, control);
        case Kind::lazy: return run_epoll_receiver(EpollMode::lazy, core, control);
        case Kind::edge:
        case Kind::recycled: return run_epoll_receiver(EpollMode::edge, core, control);
        case Kind::uring: return run_uring_receiver(core, control);
        case Kind::thread_per_link: return run_blocking_receiver(core, control);
        case Kind::sigio: return run_sigio_receiver(core, control);
      }
      return Result<void>{transport::success()};
    }));
    threads.push_back(start_end(*senders[g], send_result, control,
                                [k, &control, &epoll_ctl_saved](SendCore& core) {
      switch (k) {
        case Kind::rearm: return run_epoll_sender(EpollMode::rearm, core, control, epoll_ctl_saved);
        case Kind::lazy: return run_epoll_sender(EpollMode::lazy, core, control, epoll_ctl_saved);
        case Kind::edge:
        case Kind::recycled:
          return run_epoll_sender(EpollMode::edge, core, control, epoll_ctl_saved);
        case Kind::uring: return run_uring_sender(core, control);
        case Kind::thread_per_link: return run_blocking_sender(core, control);
        case Kind::sigio: return run_sigio_sender(core, control);
      }
      return Result<void>{transport::success()};
    }));
  }
  for (auto& thread : threads) thread.join();
  const std::int64_t wall_ns = now_ns() - shape.start_ns;
  const auto usage = transport::ProcessUsage::sample() - usage_before;
  auto machine = window.value().stop();
  if (!machine) return machine.error();

  // The first failure that is not just "the other end failed".
  const Result<void>* failure = nullptr;
  for (const auto& result : results) {
    if (!result && (failure == nullptr || (*failure).error().category == ErrorCategory::closed)) {
      failure = &result;
    }
  }
  if (failure != nullptr) return failure->error();

  StudyResult out;
  out.strategy = config.strategy;
  out.offered_rate = config.rate;
  out.wall_s = static_cast<double>(wall_ns) / 1e9;
  ops::LatencyHistogram latency;
  Syscalls sender_calls;
  Syscalls receiver_calls;
  for (std::size_t g = 0; g < groups.size(); ++g) {
    for (std::size_t i = 0; i < groups[g].size(); ++i) {
      const auto& sent = senders[g]->links()[i];
      const auto& got = receivers[g]->links()[i];
      const bool all_sent = config.rate <= 0 || sent.next == shape.link_tuples(sent.index);
      if (got.next_tuple != sent.next || !all_sent) {
        return fail(ErrorCategory::protocol, 0,
                    "link " + std::to_string(sent.index) + ": received " +
                        std::to_string(got.next_tuple) + " tuples of " + std::to_string(sent.next) +
                        " sent");
      }
    }
    out.tuples += receivers[g]->tuples();
    out.frames += receivers[g]->frames();
    latency.merge(receivers[g]->latency());
    sender_calls.merge(senders[g]->sys());
    receiver_calls.merge(receivers[g]->sys());
    out.allocations_after_warmup +=
        senders[g]->allocations_after_warmup() + receivers[g]->allocations_after_warmup();
  }
  Syscalls all = sender_calls;
  all.merge(receiver_calls);
  out.syscalls = all.by_name();
  out.sender_syscalls = sender_calls.by_name();
  out.receiver_syscalls = receiver_calls.by_name();
  out.epoll_ctl_saved = epoll_ctl_saved;
  if (out.tuples > 0) {
    const auto n = static_cast<double>(out.tuples);
    out.tuples_per_s = out.wall_s > 0 ? n / out.wall_s : 0;
    out.machine_cpu_us_per_tuple = machine.value().busy_cpu_s * 1e6 / n;
    out.process_cpu_us_per_tuple =
        std::chrono::duration<double, std::micro>(usage.total()).count() / n;
    out.syscalls_per_tuple = static_cast<double>(all.total()) / n;
    out.p50_us = static_cast<double>(latency.percentile(50)) / 1e3;
    out.p99_us = static_cast<double>(latency.percentile(99)) / 1e3;
  }
  return out;
}

}  // namespace boreal::runtime::loopstudy
