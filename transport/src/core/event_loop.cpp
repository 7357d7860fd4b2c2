#include <boreal/transport/event_loop.hpp>

namespace boreal::transport {

// concurrency hint 1: one thread runs this context (docs/transport-notes.md §2.2).
EventLoop::EventLoop()
    : context_(1), guard_(boost::asio::make_work_guard(context_)), timer_(context_) {}

EventLoop::~EventLoop() {
  guard_.reset();
  context_.stop();
}

void EventLoop::add_source(std::function<bool()> arm) { sources_.push_back(std::move(arm)); }

int EventLoop::do_work(std::chrono::steady_clock::time_point now) {
  ++passes_;
  // The last pass, if it began with a poll, skipped enough reads to keep doing so.
  if (current_pass_ == passes_ - 1 && skips_this_pass_ < kReadinessSkips) {
    track_readiness_ = false;
  }
  skips_this_pass_ = 0;
  if (track_readiness_) {
    last_poll_ = now;
    const int handlers = poll_now();
    current_pass_ = passes_;
    return handlers;
  }
  if (now - last_poll_ < kPollInterval) return 0;
  last_poll_ = now;
  return poll_now();
}

int EventLoop::poll_now() {
  ++stats_.polls;
  return static_cast<int>(context_.poll());
}

bool EventLoop::try_arm() {
  fired_ = false;
  poll_now();  // retire completions of earlier waits so sources can issue fresh ones
  fired_ = false;
  for (auto& arm : sources_) {
    if (!arm()) return false;
  }
  // A wait issued just now on a source that is already ready completes here.
  poll_now();
  return !fired_;
}

void EventLoop::begin_readiness_passes() noexcept {
  track_readiness_ = readiness_readers_ >= kReadinessReaders;
  // The passes before this block or sleep, which may have skipped few reads, do not stop the
  // ones after it from beginning with a poll.
  current_pass_ = kNoPass;
}

void EventLoop::slept() { begin_readiness_passes(); }

bool EventLoop::wait(std::chrono::nanoseconds timeout) {
  begin_readiness_passes();
  timer_fired_ = false;
  // A new generation on every wait, timed or not: the handler of an earlier timer that had
  // already expired when its wait ended by an event cannot be cancelled any more, and must not
  // end this wait as a timeout.
  const auto generation = ++timer_generation_;
  const bool timed = timeout != std::chrono::nanoseconds::max();
  if (timed) {
    timer_.expires_after(timeout);
    timer_.async_wait(
        with_memory(timer_memory_, [this, generation](const boost::system::error_code& ec) {
          if (!ec && generation == timer_generation_) timer_fired_ = true;
        }));
  }
  // run_one() blocks in epoll_wait; handlers of stale waits may run first, so loop until
  // ours fired. The work guard keeps run_one() from returning for lack of work.
  while (!fired_ && !timer_fired_) {
    ++stats_.runs;
    if (context_.run_one() == 0) break;
  }
  if (timed && !timer_fired_) timer_.cancel();
  return fired_;
}

}  // namespace boreal::transport
