// One I/O thread's event loop: an asio::io_context in which every medium registers what it
// can wait on (sockets, eventfds, a libfabric completion queue's wait fd). It is the
// Waitable that the block, backoff and adaptive modes block on, whatever the media.
//
// Links move data with non-blocking system calls from their own do_work()/poll(); the
// io_context runs only connection set-up (connect, accept) and the waits that end a block.
// Owned by one thread; nothing here is thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <vector>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include <boreal/transport/handler_memory.hpp>
#include <boreal/transport/waitable.hpp>

namespace boreal::transport {

struct EventLoopStats {
  std::uint64_t polls = 0;  // io_context::poll() calls (one epoll_wait(0) each)
  std::uint64_t runs = 0;   // io_context::run_one() calls while blocked (one epoll_wait each)
};

class EventLoop final : public Waitable {
 public:
  EventLoop();
  EventLoop(const EventLoop&) = delete;
  EventLoop& operator=(const EventLoop&) = delete;
  ~EventLoop() override;

  [[nodiscard]] boost::asio::io_context& context() noexcept { return context_; }

  // Adds a source to arm before blocking: `arm` issues its waits and returns false when the
  // source has work right now. Called at set-up; the functions live as long as the loop.
  void add_source(std::function<bool()> arm);

  // Called once at the start of every pass over the thread's links. Runs completion handlers
  // that are ready, without blocking, at most once per `kPollInterval` so a busy data path
  // pays for no extra epoll_wait; but on every pass while readiness pays (below). Returns
  // handlers run.
  int do_work(std::chrono::steady_clock::time_point now);
  // Runs ready handlers now (set-up paths that must not wait for the interval).
  int poll_now();

  // Called by any completion handler that should end a block (data ready, connect done...).
  // Loop thread only; another thread wakes the loop by posting a handler that calls it.
  // try_arm() first retires completions left from earlier waits and forgets their notify():
  // each source's arm function must itself report the work those completions announced.
  void notify() noexcept { fired_ = true; }

  [[nodiscard]] bool try_arm() override;
  bool wait(std::chrono::nanoseconds timeout) override;
  void disarm() override {}
  // After a sleep, as after a block, the passes begin with a poll (readiness, below).
  void slept() override;

  [[nodiscard]] const EventLoopStats& stats() const noexcept { return stats_; }
  // Passes begun so far (do_work() calls): what several links sharing one connection use to
  // do its I/O once per pass (tcp/tcp_send_link.hpp).
  [[nodiscard]] std::uint64_t passes() const noexcept { return passes_; }

  // Readiness. A tcp link arms a read wait when its thread blocks (or, in a pass that began
  // with a poll, before it reads), and the wait stays pending until the socket becomes
  // readable and the wait's handler runs in one of this loop's polls. After the loop blocked
  // or its thread slept, when it has at least kReadinessReaders links that read this way (a
  // thread with many connections, of which a wake-up finds few ready), the passes begin with
  // a poll (do_work()), so a read wait still pending during such a pass means the socket had
  // nothing to read when the pass began: the link skips its read (one epoll_wait(0) per pass
  // instead of a recv() per idle link; skip_read_this_pass()). The passes keep beginning with
  // a poll while at least kReadinessSkips reads a pass are skipped, and until the next block
  // or sleep once fewer are (a thread that spins after a wake-up, its links' waits run, would
  // pay the poll for nothing). Bytes that arrive later in a pass are reported by the next
  // poll, so a skip delays them by at most one pass.
  void add_readiness_reader() noexcept { ++readiness_readers_; }
  void remove_readiness_reader() noexcept { --readiness_readers_; }
  [[nodiscard]] int readiness_readers() const noexcept { return readiness_readers_; }
  // This pass began with every handler run (the readiness passes above).
  [[nodiscard]] bool pass_began_with_poll() const noexcept { return current_pass_ == passes_; }
  // A link whose read wait is pending on a socket seen empty since it was armed asks whether
  // it may skip its read: yes when this pass began with every handler run, at most once per
  // pass for each caller, whose `seen` records the last pass it asked in (a second call in
  // one pass, or a link polled outside the passes, reads as it did before). A skip is counted.
  [[nodiscard]] bool skip_read_this_pass(std::uint64_t& seen) noexcept {
    const bool skip = current_pass_ == passes_ && seen != passes_;
    seen = passes_;
    if (skip) ++skips_this_pass_;
    return skip;
  }
  static constexpr int kReadinessReaders = 3;
  static constexpr int kReadinessSkips = 2;

  // 100 µs: accepts and connects are noticed within a tenth of a millisecond while a busy
  // loop adds at most 10 k epoll_wait(0) calls per second (~0.1 µs each,
  // docs/transport-notes.md §2).
  static constexpr std::chrono::microseconds kPollInterval{100};

 private:
  // After a block or a sleep: the next passes begin with a poll (readiness, above).
  void begin_readiness_passes() noexcept;
  boost::asio::io_context context_;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> guard_;
  boost::asio::steady_timer timer_;
  // The timer wait's handler, so a timed block allocates nothing (handler_memory.hpp).
  SharedHandlerMemory timer_memory_ = make_handler_memory();
  std::vector<std::function<bool()>> sources_;
  std::chrono::steady_clock::time_point last_poll_{};
  std::uint64_t passes_ = 0;
  static constexpr std::uint64_t kNoPass = ~std::uint64_t{0};
  std::uint64_t current_pass_ = kNoPass;  // the last pass that began with a poll
  int readiness_readers_ = 0;
  int skips_this_pass_ = 0;
  bool track_readiness_ = false;  // the next pass begins with a poll
  std::uint64_t timer_generation_ = 0;
  bool fired_ = false;
  bool timer_fired_ = false;
  EventLoopStats stats_;
};

}  // namespace boreal::transport
