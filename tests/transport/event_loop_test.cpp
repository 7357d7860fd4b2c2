// The real EventLoop as the Waitable of the blocking modes, and run_agent() over it with each
// wait mode. Waits are bounded (2 s for a wake-up, a 10 s watchdog on whole runs); no test
// asserts how long anything took.
#include <boreal/transport/agent_runner.hpp>
#include <boreal/transport/event_loop.hpp>

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

#include <boost/asio/post.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <gtest/gtest.h>

namespace boreal::transport {
namespace {

using namespace std::chrono_literals;

constexpr std::chrono::nanoseconds kWakeBound = 2s;

// Wakes `loop` from any thread: asio::post is thread-safe, notify() runs on the loop's thread.
void post_notify(EventLoop& loop) {
  boost::asio::post(loop.context(), [&loop] { loop.notify(); });
}

TEST(EventLoop, ArmsWithNoSourcesAndTimesOutWithoutAnEvent) {
  EventLoop loop;
  ASSERT_TRUE(loop.try_arm());
  EXPECT_FALSE(loop.wait(1ms));
  loop.disarm();
  EXPECT_GE(loop.stats().runs, 1u);
}

TEST(EventLoop, SourceWithWorkMakesTryArmFail) {
  EventLoop loop;
  int idle_calls = 0;
  int busy_calls = 0;
  int after_calls = 0;
  bool has_work = false;
  loop.add_source([&] {
    ++idle_calls;
    return true;
  });
  loop.add_source([&] {
    ++busy_calls;
    return !has_work;
  });
  loop.add_source([&] {
    ++after_calls;
    return true;
  });
  EXPECT_TRUE(loop.try_arm());
  has_work = true;
  EXPECT_FALSE(loop.try_arm());
  EXPECT_EQ(idle_calls, 2);
  EXPECT_EQ(busy_calls, 2);
  EXPECT_EQ(after_calls, 1);  // arming stops at the first source with work
}

// The event lands while the sources are being armed (after the poll that found nothing):
// try_arm() must report it rather than let the thread block.
TEST(EventLoop, EventPostedWhileArmingMakesTryArmFail) {
  EventLoop loop;
  bool post_once = true;
  loop.add_source([&] {
    if (post_once) post_notify(loop);
    post_once = false;
    return true;
  });
  EXPECT_FALSE(loop.try_arm());
  loop.disarm();
  EXPECT_TRUE(loop.try_arm());  // the event was consumed; nothing new
  EXPECT_FALSE(loop.wait(1ms));
}

TEST(EventLoop, HandlerPostedFromAnotherThreadWakesTheWait) {
  EventLoop loop;
  ASSERT_TRUE(loop.try_arm());
  std::thread waker([&] { post_notify(loop); });
  const bool woken = loop.wait(kWakeBound);
  waker.join();
  loop.disarm();
  EXPECT_TRUE(woken);
}

// A medium's readiness fd (here an eventfd, as an inproc doorbell or a libfabric wait fd would
// be) registered through add_source: the arm issues one async wait per fd and reports work
// when the fd is already readable.
class EventFdSource {
 public:
  explicit EventFdSource(EventLoop& loop)
      : loop_(loop), fd_(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)), descriptor_(loop.context()) {
    descriptor_.assign(::dup(fd_));
    loop_.add_source([this] { return arm(); });
  }
  EventFdSource(const EventFdSource&) = delete;
  EventFdSource& operator=(const EventFdSource&) = delete;
  ~EventFdSource() { ::close(fd_); }

  [[nodiscard]] bool valid() const { return fd_ >= 0; }
  // Any thread.
  void ring() {
    const std::uint64_t one = 1;
    ASSERT_EQ(::write(fd_, &one, sizeof one), static_cast<ssize_t>(sizeof one));
  }
  // Loop thread: takes the count (0 when nothing rang).
  std::uint64_t drain() {
    std::uint64_t count = 0;
    if (::read(fd_, &count, sizeof count) != static_cast<ssize_t>(sizeof count)) return 0;
    return count;
  }
  [[nodiscard]] int waits_issued() const { return waits_issued_; }

 private:
  bool arm() {
    if (!wait_pending_) {
      wait_pending_ = true;
      ++waits_issued_;
      descriptor_.async_wait(boost::asio::posix::stream_descriptor::wait_read,
                             [this](const boost::system::error_code&) {
                               wait_pending_ = false;
                               loop_.notify();
                             });
    }
    // The check after issuing the wait, as fi_trywait does: with edge-triggered epoll a
    // readiness edge that the reactor saw before this wait was queued is not reported again.
    pollfd ready{fd_, POLLIN, 0};
    return ::poll(&ready, 1, 0) == 0;
  }

  EventLoop& loop_;
  int fd_;
  boost::asio::posix::stream_descriptor descriptor_;
  bool wait_pending_ = false;
  int waits_issued_ = 0;
};

TEST(EventLoop, EventFdWrittenFromAnotherThreadWakesTheWait) {
  EventLoop loop;
  EventFdSource source{loop};
  ASSERT_TRUE(source.valid());
  ASSERT_TRUE(loop.try_arm());
  std::thread writer([&] { source.ring(); });
  const bool woken = loop.wait(kWakeBound);
  writer.join();
  loop.disarm();
  EXPECT_TRUE(woken);
  EXPECT_EQ(source.drain(), 1u);
  EXPECT_EQ(source.waits_issued(), 1);
}

TEST(EventLoop, ReadyEventFdMakesTryArmFail) {
  EventLoop loop;
  EventFdSource source{loop};
  ASSERT_TRUE(source.valid());
  source.ring();  // already readable when the thread goes to arm
  EXPECT_FALSE(loop.try_arm());
  loop.disarm();
  EXPECT_EQ(source.drain(), 1u);
  EXPECT_TRUE(loop.try_arm());  // drained: arms and times out
  EXPECT_FALSE(loop.wait(1ms));
}

TEST(EventLoop, TimeoutThenEventStillWakes) {
  EventLoop loop;
  ASSERT_TRUE(loop.try_arm());
  EXPECT_FALSE(loop.wait(1ms));
  loop.disarm();
  ASSERT_TRUE(loop.try_arm());
  std::thread waker([&] { post_notify(loop); });
  const bool woken = loop.wait(kWakeBound);
  waker.join();
  EXPECT_TRUE(woken);
}

// ---- run_agent over every wait mode ------------------------------------------------------

// Counts units that another thread produces. The producer bumps an atomic and then posts a
// wake-up; the loop's source re-reads the atomic, so a wake-up that arrives while the agent is
// busy (and is retired by try_arm) cannot make it sleep through the unit.
class CountingAgent {
 public:
  explicit CountingAgent(std::uint64_t target) : target_(target) {
    loop_.add_source([this] { return produced_.load(std::memory_order_acquire) == consumed_; });
  }

  // Producer thread.
  void produce() {
    produced_.fetch_add(1, std::memory_order_release);
    post_notify(loop_);
  }

  // Producer thread: waits (at most `limit`) until the agent has taken every unit produced.
  bool await_caught_up(std::chrono::steady_clock::duration limit) const {
    const auto give_up = std::chrono::steady_clock::now() + limit;
    while (taken_.load(std::memory_order_acquire) != produced_.load(std::memory_order_acquire)) {
      if (std::chrono::steady_clock::now() > give_up) return false;
      std::this_thread::yield();
    }
    return true;
  }

  // Agent thread.
  int do_work() {
    loop_.do_work(std::chrono::steady_clock::now());  // retires stale wake-up handlers
    const std::uint64_t produced = produced_.load(std::memory_order_acquire);
    const auto work = static_cast<int>(produced - consumed_);
    consumed_ = produced;
    taken_.store(consumed_, std::memory_order_release);
    return work;
  }
  [[nodiscard]] bool done() const { return consumed_ >= target_; }
  Waitable& waitable() { return loop_; }
  [[nodiscard]] const LoadHints& hints() const { return hints_; }

  [[nodiscard]] std::uint64_t consumed() const { return consumed_; }
  EventLoop& loop() { return loop_; }

 private:
  EventLoop loop_;
  std::atomic<std::uint64_t> produced_{0};
  std::uint64_t consumed_ = 0;
  std::atomic<std::uint64_t> taken_{0};  // consumed_, for the producer's await_caught_up()
  std::uint64_t target_;
  LoadHints hints_;
};
static_assert(Agent<CountingAgent>);

// Stops a run that has not finished within `limit`; ends early when dismissed.
class Watchdog {
 public:
  Watchdog(std::atomic<bool>& stop, EventLoop& loop, std::chrono::seconds limit)
      : thread_([this, &stop, &loop, limit] {
          std::unique_lock lock(mutex_);
          if (!cv_.wait_for(lock, limit, [this] { return dismissed_; })) {
            fired_ = true;
            stop.store(true);
            post_notify(loop);
          }
        }) {}
  ~Watchdog() { dismiss(); }
  void dismiss() {
    {
      std::lock_guard lock(mutex_);
      dismissed_ = true;
    }
    cv_.notify_one();
    if (thread_.joinable()) thread_.join();
  }
  [[nodiscard]] bool fired() const { return fired_; }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  bool dismissed_ = false;
  bool fired_ = false;
  std::thread thread_;
};

class RunAgent : public ::testing::TestWithParam<WaitMode> {};

TEST_P(RunAgent, EveryModeSeesAllUnitsAndStops) {
  constexpr std::uint64_t kUnits = 2000;
  WaitConfig config;
  config.mode = GetParam();
  config.latency_budget = 100us;
  config.spin = 5us;
  AnyWait wait = make_wait(config);
  CountingAgent agent{kUnits};
  std::atomic<bool> stop{false};
  Watchdog watchdog{stop, agent.loop(), 10s};

  // Bursts with pauses between them, so the agent also goes idle and sleeps or blocks. Each
  // pause begins once the agent has taken the burst: an agent thread descheduled while the
  // producer ran through every burst (ASan on a loaded CI machine) took all 2000 units without
  // one empty poll, and so without the sleep checked below.
  std::thread producer([&] {
    for (std::uint64_t i = 0; i < kUnits; ++i) {
      agent.produce();
      if (i % 100 == 99) {
        (void)agent.await_caught_up(1s);  // the watchdog bounds the whole run
        std::this_thread::sleep_for(200us);
      }
    }
  });
  run_agent(agent, wait, stop);
  producer.join();
  watchdog.dismiss();

  EXPECT_FALSE(watchdog.fired()) << "the run did not finish within 10 s";
  EXPECT_EQ(agent.consumed(), kUnits);
  const WaitStats& s = stats_of(wait);
  EXPECT_GE(s.polls - s.empty_polls, 1u);
  EXPECT_LE(s.polls - s.empty_polls, kUnits);  // each productive poll took at least one unit
  EXPECT_EQ(s.failed_arms + s.blocks, s.arms);
  // `busy` never arms or sleeps. `sleep` may block: it does after idle_before_block() (2 ms
  // here) without work, which a producer descheduled on a loaded machine can cause; the fake-
  // clock tests in wait_modes_test.cpp pin that rule down.
  if (config.mode == WaitMode::busy) {
    EXPECT_EQ(s.arms, 0u);
    EXPECT_EQ(s.sleeps, 0u);
  }
  if (config.mode == WaitMode::sleep) {
    EXPECT_GE(s.sleeps, 1u);  // the pauses between bursts are 200 µs, twice the budget
  }
}

INSTANTIATE_TEST_SUITE_P(AllModes, RunAgent, ::testing::ValuesIn(kAllWaitModes),
                         [](const ::testing::TestParamInfo<WaitMode>& mode) {
                           return std::string(to_string(mode.param));
                         });

}  // namespace
}  // namespace boreal::transport
