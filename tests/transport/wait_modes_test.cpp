// The five wait modes as state machines, driven by a fake clock and a scripted waitable so
// every count and every step is exact and no real time passes (except one short real sleep
// that checks make_wait() passes the config through).
#include <boreal/transport/adaptive_wait.hpp>
#include <boreal/transport/agent_runner.hpp>
#include <boreal/transport/backoff_wait.hpp>
#include <boreal/transport/block_wait.hpp>
#include <boreal/transport/busy_wait.hpp>
#include <boreal/transport/rate_estimator.hpp>
#include <boreal/transport/sleep_wait.hpp>
#include <boreal/transport/wait_mode.hpp>

#include <array>
#include <chrono>
#include <cstdint>
#include <deque>
#include <limits>
#include <set>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include <gtest/gtest.h>

namespace boreal::transport {
namespace {

using namespace std::chrono_literals;
using std::chrono::nanoseconds;
using TimePoint = std::chrono::steady_clock::time_point;

// Everything the fake clock and the fake waitable did, in order: "relax", "yield",
// "sleep <ns>", "arm", "wait <ns>", "disarm".
std::vector<std::string>& event_log() {
  static std::vector<std::string> log;
  return log;
}

// A clock whose time moves only when a wait mode relaxes, yields or sleeps (by the steps set
// below) or when a test advances it. Static because the Clock concept is static.
struct FakeClock {
  using time_point = TimePoint;
  static inline time_point current{};
  static inline nanoseconds relax_step{0};
  static inline nanoseconds yield_step{0};
  static inline nanoseconds sleep_overshoot{0};
  static inline std::vector<nanoseconds> sleeps;

  static time_point now() noexcept { return current; }
  static void sleep_for(nanoseconds duration) noexcept {
    sleeps.push_back(duration);
    event_log().push_back("sleep " + std::to_string(duration.count()));
    current += duration + sleep_overshoot;
  }
  static void yield() noexcept {
    event_log().push_back("yield");
    current += yield_step;
  }
  static void relax() noexcept {
    event_log().push_back("relax");
    current += relax_step;
  }
  static void advance(nanoseconds d) { current += d; }
  static void reset() {
    current = TimePoint{} + 1s;  // away from the epoch, like a real steady clock
    relax_step = yield_step = sleep_overshoot = nanoseconds{0};
    sleeps.clear();
    event_log().clear();
  }
};

// A source with a queue of pending work. Work can be scripted to "arrive" at the moment
// try_arm() is called (after the poll that found nothing, before the notification is in
// place: the race the arm → re-poll → block protocol exists for) or during wait().
class FakeWaitable final : public Waitable {
 public:
  // What the agent's do_work() would see: takes all pending work.
  int poll() { return std::exchange(pending, 0); }

  bool try_arm() override {
    ++arm_calls;
    event_log().push_back("arm");
    pending += std::exchange(arrive_at_arm, 0);
    if (!arm_script.empty()) {
      const bool result = arm_script.front();
      arm_script.pop_front();
      return result;
    }
    return pending == 0;
  }
  bool wait(nanoseconds timeout) override {
    timeouts.push_back(timeout);
    event_log().push_back("wait " + std::to_string(timeout.count()));
    pending += std::exchange(arrive_during_wait, 0);
    FakeClock::advance(wait_takes);
    return wake;
  }
  void disarm() override {
    ++disarm_calls;
    event_log().push_back("disarm");
  }

  int pending = 0;
  int arrive_at_arm = 0;
  int arrive_during_wait = 0;
  std::deque<bool> arm_script;  // overrides the pending check while not empty
  bool wake = true;             // wait() result: woken (true) or timed out (false)
  nanoseconds wait_takes{0};
  int arm_calls = 0;
  int disarm_calls = 0;
  std::vector<nanoseconds> timeouts;
};

std::vector<std::string> repeat(const std::string& event, int n) {
  return std::vector<std::string>(static_cast<std::size_t>(n), event);
}
std::vector<std::string> concat(std::vector<std::vector<std::string>> parts) {
  std::vector<std::string> out;
  for (auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}
std::string wait_event(nanoseconds timeout) { return "wait " + std::to_string(timeout.count()); }
std::string sleep_event(nanoseconds t) { return "sleep " + std::to_string(t.count()); }

class WaitModeTest : public ::testing::Test {
 protected:
  void SetUp() override { FakeClock::reset(); }
  FakeWaitable source_;
  LoadHints hints_;
};

// ---- busy ------------------------------------------------------------------------------

using BusyWaitTest = WaitModeTest;

TEST_F(BusyWaitTest, SpinsOnEmptyPollsAndNeverSleepsOrBlocks) {
  BasicBusyWait<FakeClock> wait;
  for (int work : {3, 0, 0, 1, 0}) wait.idle(work, source_, hints_);
  const WaitStats& s = wait.stats();
  EXPECT_EQ(s.polls, 5u);
  EXPECT_EQ(s.empty_polls, 3u);
  EXPECT_EQ(s.spins, 3u);
  EXPECT_EQ(s.sleeps, 0u);
  EXPECT_EQ(s.yields, 0u);
  EXPECT_EQ(s.arms, 0u);
  EXPECT_EQ(s.blocks, 0u);
  EXPECT_EQ(event_log(), repeat("relax", 3));  // the waitable was never touched
  EXPECT_EQ(source_.arm_calls, 0);
}

// ---- block -----------------------------------------------------------------------------

using BlockWaitTest = WaitModeTest;

TEST_F(BlockWaitTest, DoesNothingWhenThePollDidWork) {
  BasicBlockWait<FakeClock> wait;
  wait.idle(2, source_, hints_);
  EXPECT_EQ(wait.stats().polls, 1u);
  EXPECT_EQ(wait.stats().empty_polls, 0u);
  EXPECT_TRUE(event_log().empty());
}

TEST_F(BlockWaitTest, ArmsThenWaitsOnceWithTheSafetyTimeoutThenDisarms) {
  BasicBlockWait<FakeClock> wait;
  source_.wait_takes = 3ms;
  wait.idle(0, source_, hints_);
  EXPECT_EQ(event_log(), (std::vector<std::string>{"arm", wait_event(kMaxBlock), "disarm"}));
  const WaitStats& s = wait.stats();
  EXPECT_EQ(s.arms, 1u);
  EXPECT_EQ(s.failed_arms, 0u);
  EXPECT_EQ(s.blocks, 1u);
  EXPECT_EQ(s.wakeups, 1u);
  EXPECT_EQ(s.timeouts, 0u);
  EXPECT_EQ(s.blocked, 3ms);
  EXPECT_EQ(s.spins + s.sleeps + s.yields, 0u);
}

TEST_F(BlockWaitTest, TimeoutIsCountedApartFromWakeups) {
  BasicBlockWait<FakeClock> wait;
  source_.wake = false;
  wait.idle(0, source_, hints_);
  wait.idle(0, source_, hints_);
  EXPECT_EQ(wait.stats().blocks, 2u);
  EXPECT_EQ(wait.stats().timeouts, 2u);
  EXPECT_EQ(wait.stats().wakeups, 0u);
  EXPECT_EQ(source_.disarm_calls, 2);
}

// The race the protocol exists for: the poll finds nothing, then work arrives before the
// notification is armed. try_arm() must see it, the thread must not block, and the next poll
// must find the work.
TEST_F(BlockWaitTest, WorkArrivingBetweenEmptyPollAndArmIsNotSlept) {
  BasicBlockWait<FakeClock> wait;
  ASSERT_EQ(source_.poll(), 0);  // the empty poll
  source_.arrive_at_arm = 1;     // lands just before the arm
  wait.idle(0, source_, hints_);
  EXPECT_EQ(event_log(), (std::vector<std::string>{"arm", "disarm"}));
  EXPECT_TRUE(source_.timeouts.empty());  // no wait() at all
  EXPECT_EQ(wait.stats().arms, 1u);
  EXPECT_EQ(wait.stats().failed_arms, 1u);
  EXPECT_EQ(wait.stats().blocks, 0u);
  EXPECT_EQ(source_.poll(), 1);  // the next poll sees it

  // Once drained, the next empty poll arms successfully and blocks exactly once.
  source_.arrive_during_wait = 2;
  wait.idle(0, source_, hints_);
  EXPECT_EQ(source_.timeouts.size(), 1u);
  EXPECT_EQ(wait.stats().blocks, 1u);
  EXPECT_EQ(wait.stats().failed_arms, 1u);
  EXPECT_EQ(source_.disarm_calls, 2);  // disarm after the failed arm and after the wait
  EXPECT_EQ(source_.poll(), 2);
}

TEST_F(BlockWaitTest, WaitIsCappedByTheAgentsDeadline) {
  BasicBlockWait<FakeClock> wait;
  hints_.deadline = FakeClock::now() + 300us;
  wait.idle(0, source_, hints_);
  EXPECT_EQ(source_.timeouts, (std::vector<nanoseconds>{300us}));
}

TEST_F(BlockWaitTest, PassedDeadlineSkipsArmingAltogether) {
  BasicBlockWait<FakeClock> wait;
  hints_.deadline = FakeClock::now();
  wait.idle(0, source_, hints_);
  hints_.deadline = FakeClock::now() - 1ms;
  wait.idle(0, source_, hints_);
  EXPECT_TRUE(event_log().empty());
  EXPECT_EQ(wait.stats().arms, 0u);
  EXPECT_EQ(wait.stats().empty_polls, 2u);
}

// ---- sleep -----------------------------------------------------------------------------

WaitConfig sleep_config() {
  WaitConfig c;
  c.mode = WaitMode::sleep;
  c.latency_budget = 200us;
  c.sleep_fraction = 0.5;
  return c;
}

TEST(SleepInterval, NoArrivalsGivesTheBudget) {
  LoadHints h;
  h.arrival_rate_hz = 0.0;
  h.free_capacity = 10.0;
  EXPECT_EQ(sleep_interval(sleep_config(), h, TimePoint{} + 1s), 200us);
}

TEST(SleepInterval, HalfTheTimeToFillWhenSmallerThanTheBudget) {
  LoadHints h;
  h.arrival_rate_hz = 1e6;  // 1 frame/µs
  h.free_capacity = 100.0;  // full in 100 µs → sleep 0.5 · 100 µs
  EXPECT_EQ(sleep_interval(sleep_config(), h, TimePoint{} + 1s), 50us);
  h.free_capacity = 7.0;
  h.arrival_rate_hz = 1e5;  // 0.5 · 7 / 1e5 s = 35 µs
  EXPECT_EQ(sleep_interval(sleep_config(), h, TimePoint{} + 1s), 35us);
}

TEST(SleepInterval, NoRingToFillGivesTheBudgetOrTheDeadline) {
  LoadHints h;  // a sending-only thread: frames go out at 10 k/s, nothing of ours can overflow
  h.arrival_rate_hz = 1e4;
  h.free_capacity = std::numeric_limits<double>::infinity();
  EXPECT_EQ(sleep_interval(sleep_config(), h, TimePoint{} + 1s), 200us);
  h.deadline = TimePoint{} + 1s + 70us;  // the open frame's flush time
  EXPECT_EQ(sleep_interval(sleep_config(), h, TimePoint{} + 1s), 70us);
}

TEST(SleepInterval, BudgetCapsALongTimeToFill) {
  LoadHints h;
  h.arrival_rate_hz = 1e3;
  h.free_capacity = 100.0;  // 50 ms to half full
  EXPECT_EQ(sleep_interval(sleep_config(), h, TimePoint{} + 1s), 200us);
}

TEST(SleepInterval, DeadlineCapsTheSleep) {
  const TimePoint now = TimePoint{} + 1s;
  LoadHints h;
  h.deadline = now + 30us;
  EXPECT_EQ(sleep_interval(sleep_config(), h, now), 30us);
  h.arrival_rate_hz = 1e6;
  h.free_capacity = 40.0;  // 20 µs, earlier than the deadline
  EXPECT_EQ(sleep_interval(sleep_config(), h, now), 20us);
}

TEST(SleepInterval, NeverNegative) {
  const TimePoint now = TimePoint{} + 1s;
  LoadHints h;
  h.deadline = now - 5ms;  // overdue
  EXPECT_EQ(sleep_interval(sleep_config(), h, now), 0ns);
  LoadHints full;
  full.arrival_rate_hz = 1e6;
  full.free_capacity = -3.0;  // over-committed counts as no room
  EXPECT_EQ(sleep_interval(sleep_config(), full, now), 0ns);
  full.free_capacity = 0.0;
  EXPECT_EQ(sleep_interval(sleep_config(), full, now), 0ns);
}

TEST(SleepInterval, NotANumberKeepsTheBudget) {
  LoadHints h;
  h.arrival_rate_hz = std::numeric_limits<double>::quiet_NaN();
  h.free_capacity = 5.0;
  EXPECT_EQ(sleep_interval(sleep_config(), h, TimePoint{} + 1s), 200us);
  h.arrival_rate_hz = std::numeric_limits<double>::infinity();
  h.free_capacity = std::numeric_limits<double>::infinity();  // inf / inf
  EXPECT_EQ(sleep_interval(sleep_config(), h, TimePoint{} + 1s), 200us);
  h.arrival_rate_hz = 1e6;
  h.free_capacity = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(sleep_interval(sleep_config(), h, TimePoint{} + 1s), 0ns);
}

using SleepWaitTest = WaitModeTest;

TEST_F(SleepWaitTest, SleepsTheComputedIntervalAndMeasuresOvershoot) {
  BasicSleepWait<FakeClock> wait{sleep_config()};
  FakeClock::sleep_overshoot = 7us;
  hints_.arrival_rate_hz = 1e6;
  hints_.free_capacity = 100.0;
  wait.idle(4, source_, hints_);  // work: no sleep
  wait.idle(0, source_, hints_);
  hints_.arrival_rate_hz = 0.0;
  wait.idle(0, source_, hints_);
  // The second sleep is shortened by the 7 µs the first one overshot.
  EXPECT_EQ(FakeClock::sleeps, (std::vector<nanoseconds>{50us, 193us}));
  EXPECT_EQ(wait.overshoot_estimate(), 7us);
  const WaitStats& s = wait.stats();
  EXPECT_EQ(s.polls, 3u);
  EXPECT_EQ(s.empty_polls, 2u);
  EXPECT_EQ(s.sleeps, 2u);
  EXPECT_EQ(s.slept, 243us);
  EXPECT_EQ(s.sleep_overshoot, 14us);
  EXPECT_EQ(s.spins, 0u);
  EXPECT_EQ(source_.arm_calls, 0);  // not idle for 2 ms: it sleeps, never blocks
}

TEST_F(SleepWaitTest, OvershootEstimateFollowsTheTimerAndShortensTheNextSleep) {
  BasicSleepWait<FakeClock> wait{sleep_config()};
  hints_.arrival_rate_hz = 0.0;  // sleeps the 200 µs budget
  FakeClock::sleep_overshoot = 80us;
  wait.idle(0, source_, hints_);  // asks 200, primes the estimate at 80
  FakeClock::sleep_overshoot = 0us;
  wait.idle(0, source_, hints_);  // asks 120; estimate 80 + (0 - 80) / 8 = 70
  EXPECT_EQ(wait.overshoot_estimate(), 70us);
  // An interval shorter than the overshoot still sleeps, for the minimum.
  hints_.deadline = FakeClock::now() + 60us;
  wait.idle(0, source_, hints_);
  EXPECT_EQ(FakeClock::sleeps, (std::vector<nanoseconds>{200us, 120us, kMinSleep}));
  EXPECT_EQ(wait.stats().spins, 0u);
}

TEST_F(SleepWaitTest, WhenTheRingWouldFillWithinTheOvershootItPollsAgain) {
  BasicSleepWait<FakeClock> wait{sleep_config()};
  FakeClock::sleep_overshoot = 40us;
  hints_.arrival_rate_hz = 0.0;
  wait.idle(0, source_, hints_);  // the budget: primes the estimate at 40 µs
  hints_.arrival_rate_hz = 1e6;
  hints_.free_capacity = 80.0;  // 0.5 · 80 / 1e6 s = 40 µs: full by the time it would wake
  wait.idle(0, source_, hints_);
  hints_.free_capacity = 100.0;  // 50 µs: sleeps 50 less the 40 it expects to overshoot
  wait.idle(0, source_, hints_);
  EXPECT_EQ(event_log(), (std::vector<std::string>{sleep_event(200us), "relax",
                                                   sleep_event(10us)}));
  EXPECT_EQ(wait.stats().spins, 1u);
  EXPECT_EQ(wait.stats().sleeps, 2u);
  // A deadline as near is not the ring filling: the minimum sleep, as before.
  hints_.arrival_rate_hz = 0.0;
  hints_.deadline = FakeClock::now() + 30us;
  wait.idle(0, source_, hints_);
  EXPECT_EQ(FakeClock::sleeps.back(), kMinSleep);
  EXPECT_EQ(wait.stats().spins, 1u);
}

TEST_F(SleepWaitTest, BelowTheMinimumSleepItRelaxesInstead) {
  BasicSleepWait<FakeClock> wait{sleep_config()};
  hints_.arrival_rate_hz = 1e6;
  hints_.free_capacity = 1.0;  // 0.5 µs < kMinSleep
  wait.idle(0, source_, hints_);
  hints_.free_capacity = 2.0;  // exactly kMinSleep: worth a sleep
  wait.idle(0, source_, hints_);
  EXPECT_EQ(event_log(), (std::vector<std::string>{"relax", sleep_event(kMinSleep)}));
  EXPECT_EQ(wait.stats().spins, 1u);
  EXPECT_EQ(wait.stats().sleeps, 1u);
  EXPECT_EQ(wait.stats().slept, kMinSleep);
}

TEST_F(SleepWaitTest, AfterTenBudgetsWithNothingToDoItBlocksUntilWorkComes) {
  BasicSleepWait<FakeClock> wait{sleep_config()};  // 200 µs budget: blocks after 2 ms idle
  ASSERT_EQ(idle_before_block(sleep_config()), 2ms);
  hints_.arrival_rate_hz = 0.0;  // each sleep is the budget
  for (int i = 0; i < 11; ++i) wait.idle(0, source_, hints_);
  // Ten sleeps reach 2 ms of idleness; the eleventh empty poll blocks (no deadline: kMaxBlock).
  EXPECT_EQ(event_log(),
            concat({repeat(sleep_event(200us), 10), {"arm", wait_event(kMaxBlock), "disarm"}}));
  EXPECT_EQ(wait.stats().blocks, 1u);
  EXPECT_EQ(wait.stats().sleeps, 10u);
  // Work ends the idle stretch: the next empty poll sleeps again.
  event_log().clear();
  wait.idle(3, source_, hints_);
  wait.idle(0, source_, hints_);
  EXPECT_EQ(event_log(), (std::vector<std::string>{sleep_event(200us)}));
  // Idle again for 2 ms: a block waits only until the agent's deadline.
  for (int i = 0; i < 9; ++i) wait.idle(0, source_, hints_);
  event_log().clear();
  hints_.deadline = FakeClock::now() + 5ms;
  wait.idle(0, source_, hints_);
  EXPECT_EQ(event_log(), (std::vector<std::string>{"arm", wait_event(5ms), "disarm"}));
  // Ten 1-ms budgets: 10 ms.
  WaitConfig slow = sleep_config();
  slow.latency_budget = 1ms;
  EXPECT_EQ(idle_before_block(slow), 10ms);
}

// ---- backoff ---------------------------------------------------------------------------

WaitConfig backoff_config() {
  WaitConfig c;
  c.mode = WaitMode::backoff;
  c.spin = 1us;
  return c;
}

using BackoffWaitTest = WaitModeTest;

TEST_F(BackoffWaitTest, SpinsForTheBudgetThenYieldsThenBlocks) {
  BasicBackoffWait<FakeClock> wait{backoff_config()};
  FakeClock::relax_step = 100ns;  // 10 relaxes use up the 1 µs spin budget
  source_.wake = false;
  const int polls = 10 + kBackoffYields + 2;
  for (int i = 0; i < polls; ++i) wait.idle(0, source_, hints_);
  const std::vector<std::string> block = {"arm", wait_event(kMaxBlock), "disarm"};
  EXPECT_EQ(event_log(),
            concat({repeat("relax", 10), repeat("yield", kBackoffYields), block, block}));
  const WaitStats& s = wait.stats();
  EXPECT_EQ(s.spins, 10u);
  EXPECT_EQ(s.yields, static_cast<std::uint64_t>(kBackoffYields));
  EXPECT_EQ(s.blocks, 2u);
  EXPECT_EQ(s.timeouts, 2u);
  EXPECT_EQ(s.empty_polls, static_cast<std::uint64_t>(polls));
}

TEST_F(BackoffWaitTest, WorkResetsToSpinning) {
  BasicBackoffWait<FakeClock> wait{backoff_config()};
  FakeClock::relax_step = 100ns;
  for (int i = 0; i < 10 + 3; ++i) wait.idle(0, source_, hints_);  // into the yields
  wait.idle(1, source_, hints_);
  event_log().clear();
  for (int i = 0; i < 10 + kBackoffYields + 1; ++i) wait.idle(0, source_, hints_);
  EXPECT_EQ(event_log(), concat({repeat("relax", 10), repeat("yield", kBackoffYields),
                                 {"arm", wait_event(kMaxBlock), "disarm"}}));
  EXPECT_EQ(wait.stats().yields, static_cast<std::uint64_t>(3 + kBackoffYields));
}

TEST_F(BackoffWaitTest, BlockRespectsTheArmRace) {
  BasicBackoffWait<FakeClock> wait{backoff_config()};
  FakeClock::relax_step = 1us;  // one relax ends the spin phase
  for (int i = 0; i < 1 + kBackoffYields; ++i) wait.idle(0, source_, hints_);
  event_log().clear();
  source_.arrive_at_arm = 1;
  wait.idle(0, source_, hints_);
  EXPECT_EQ(event_log(), (std::vector<std::string>{"arm", "disarm"}));
  EXPECT_EQ(wait.stats().failed_arms, 1u);
  EXPECT_EQ(source_.poll(), 1);
}

// ---- adaptive --------------------------------------------------------------------------

WaitConfig adaptive_config() {
  WaitConfig c;
  c.mode = WaitMode::adaptive;
  // L. A receiving thread's sleep spans L = 200 µs (while f·C/λ is longer): it blocks when
  // 1/λ > 200 µs and sleeps again when 1/λ < 100 µs. A sending-only thread blocks when
  // 1/λ > 2L = 400 µs and sleeps again when 1/λ < L.
  c.latency_budget = 200us;
  c.spin = 20us;             // W before any measurement; L/4 = 50 µs, so S = 20 µs
  c.sleep_fraction = 0.5;
  return c;
}

class AdaptiveWaitTest : public WaitModeTest {
 protected:
  void SetUp() override {
    WaitModeTest::SetUp();
    FakeClock::relax_step = 1us;         // 20 relaxes spend the 20 µs spin budget
    FakeClock::sleep_overshoot = 20us;   // equal to W, so W stays 20 µs
    source_.wake = true;
    source_.wait_takes = 1ms;
  }
  // One idle episode at `rate_hz`: empty polls until the wait sleeps or blocks once, then a
  // poll with work. Returns the events of the episode.
  std::vector<std::string> episode(BasicAdaptiveWait<FakeClock>& wait, double rate_hz,
                                   double capacity = 100.0) {
    hints_.arrival_rate_hz = rate_hz;
    hints_.free_capacity = capacity;
    event_log().clear();
    const auto acted = [&] { return wait.stats().sleeps + wait.stats().blocks; };
    const auto before = acted();
    for (int i = 0; i < 100 && acted() == before; ++i) wait.idle(0, source_, hints_);
    wait.idle(1, source_, hints_);
    return event_log();
  }
  // The episode's final step, after the 20 spins.
  static std::string last(const std::vector<std::string>& events) {
    return events.empty() ? std::string{} : events.back();
  }
};

TEST_F(AdaptiveWaitTest, SleepsWithoutSpinningWhenASleepSpansSeveralArrivals) {
  BasicAdaptiveWait<FakeClock> wait{adaptive_config()};
  ASSERT_EQ(wait.spin_budget(), 20us);
  // 100 k frames/s: a frame every 10 µs. The span is min(L, f·C/λ) = min(200 µs,
  // 0.5 · 100 / 1e5 s = 500 µs) = 200 µs, 20 arrivals: one wake-up for all of them beats
  // spinning, so it sleeps at once, ending W = 20 µs before the span.
  const auto events = episode(wait, 1e5);
  EXPECT_EQ(events, std::vector<std::string>{sleep_event(180us)});
  const WaitStats& s = wait.stats();
  EXPECT_EQ(s.spins, 0u);
  EXPECT_EQ(s.spin_skips, 1u);
  EXPECT_EQ(s.sleeps, 1u);
  EXPECT_EQ(s.blocks, 0u);
  EXPECT_EQ(s.switches, 0u);
  EXPECT_EQ(s.state_entries, (std::array<std::uint64_t, kIdleStateCount>{0, 1, 0}));
  // 180 µs asleep + 20 µs overshoot.
  EXPECT_EQ(s.state_time[static_cast<std::size_t>(IdleState::sleep)], 200us);
  EXPECT_FALSE(wait.prefers_block());
}

TEST_F(AdaptiveWaitTest, PollsAgainWhenTheRingWouldFillDuringASleep) {
  BasicAdaptiveWait<FakeClock> wait{adaptive_config()};
  hints_.arrival_rate_hz = 1e7;  // 0.5 · 4 / 1e7 s = 0.2 µs < kMinSleep
  hints_.free_capacity = 4.0;
  for (int i = 0; i < 30; ++i) wait.idle(0, source_, hints_);
  EXPECT_EQ(event_log(), repeat("relax", 30));
  EXPECT_EQ(wait.stats().spins, 30u);
  EXPECT_EQ(wait.stats().sleeps + wait.stats().blocks, 0u);
  wait.idle(1, source_, hints_);
  EXPECT_EQ(wait.stats().state_time[static_cast<std::size_t>(IdleState::spin)], 30us);
}

TEST_F(AdaptiveWaitTest, BlocksWhenArrivalsAreRareAndSpinsFirstOnceItPrefersTo) {
  BasicAdaptiveWait<FakeClock> wait{adaptive_config()};
  // One frame per 100 ms: a sleep would span 0.002 of them. The first episode learns that
  // and blocks; the next ones spin S = 20 µs first, the cost of one wake-up.
  EXPECT_EQ(episode(wait, 10.0),
            (std::vector<std::string>{"arm", wait_event(kMaxBlock), "disarm"}));
  EXPECT_TRUE(wait.prefers_block());
  EXPECT_EQ(episode(wait, 10.0),
            concat({repeat("relax", 20), {"arm", wait_event(kMaxBlock), "disarm"}}));
  const WaitStats& s = wait.stats();
  EXPECT_EQ(s.blocks, 2u);
  EXPECT_EQ(s.switches, 1u);  // from the initial preference (sleep) to block
  EXPECT_EQ(s.state_entries, (std::array<std::uint64_t, kIdleStateCount>{1, 0, 2}));
  EXPECT_EQ(s.state_time[static_cast<std::size_t>(IdleState::spin)], 20us);
  EXPECT_EQ(s.state_time[static_cast<std::size_t>(IdleState::block)], 2ms);
}

TEST_F(AdaptiveWaitTest, HysteresisStopsFlappingNearTheThreshold) {
  BasicAdaptiveWait<FakeClock> wait{adaptive_config()};
  // Arrival gaps of 120 µs and 150 µs: a 200 µs span holds 1.67 and 1.33 arrivals, between
  // one and two, so the preference never changes.
  const auto between = [](int i) { return i % 2 == 0 ? 1e6 / 120.0 : 1e6 / 150.0; };
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ(episode(wait, between(i)), std::vector<std::string>{sleep_event(180us)})
        << "episode " << i;
  }
  EXPECT_EQ(wait.stats().switches, 0u);

  EXPECT_EQ(last(episode(wait, 4000.0)), "disarm");  // 250 µs: the span holds 0.8: block
  EXPECT_EQ(wait.stats().switches, 1u);
  // Blocking, it spins first; no episode ends inside its spin, so from the fifth the spin is
  // skipped (SkipsTheSpinWhileItDoesNotPayAndProbesLessOftenWhileProbesFail).
  for (int i = 0; i < 6; ++i) {
    const auto events = episode(wait, between(i));
    EXPECT_EQ(events.size(), i < 4 ? 23u : 3u) << "episode " << i;
    EXPECT_EQ(last(events), "disarm") << "episode " << i;
  }
  EXPECT_EQ(wait.stats().switches, 1u);

  EXPECT_EQ(last(episode(wait, 2e4)), sleep_event(180us));  // 50 µs, 4 spanned: sleep again
  EXPECT_EQ(wait.stats().switches, 2u);
  const WaitStats& s = wait.stats();
  EXPECT_EQ(s.sleeps, 7u);
  EXPECT_EQ(s.blocks, 7u);
  EXPECT_EQ(s.state_entries, (std::array<std::uint64_t, kIdleStateCount>{4, 7, 7}));
  EXPECT_EQ(s.spin_skips, 10u);  // the 7 episodes that began preferring sleep, 3 that skipped
  EXPECT_EQ(s.state_time[static_cast<std::size_t>(IdleState::spin)], 4 * 20us);
  EXPECT_EQ(s.state_time[static_cast<std::size_t>(IdleState::sleep)], 7 * 200us);
  EXPECT_EQ(s.state_time[static_cast<std::size_t>(IdleState::block)], 7 * 1ms);
}

TEST_F(AdaptiveWaitTest, AReceiverBlocksWhereASleepWouldSpanLessThanOneArrival) {
  // 4 k frames/s, a frame every 250 µs: a receiver's 200 µs sleep would span 0.8 of them,
  // costing a wake-up per frame as blocking does, but late: it blocks.
  BasicAdaptiveWait<FakeClock> receiver{adaptive_config()};
  EXPECT_EQ(last(episode(receiver, 4000.0)), "disarm");
  EXPECT_TRUE(receiver.prefers_block());
}

TEST_F(AdaptiveWaitTest, ASenderBlocksUntilControlFramesWakeItThenSleepsAndProbesWithBlocks) {
  // A thread that only sends has no ring (free capacity +inf). Its blocks end at its deadline
  // (the fake source times out): it keeps blocking, whatever its frame rate.
  BasicAdaptiveWait<FakeClock> sender{adaptive_config()};
  const double no_ring = std::numeric_limits<double>::infinity();
  source_.wake = false;
  for (int i = 0; i < 20; ++i) ASSERT_EQ(last(episode(sender, 1e5, no_ring)), "disarm") << i;
  EXPECT_TRUE(sender.prefers_block());
  EXPECT_EQ(sender.woken_share(), 0.0);
  EXPECT_EQ(sender.stats().switches, 1u);  // from the initial preference, sleep
  // Control frames now end its blocks early: the share of woken blocks climbs 1/8, 0.23,
  // 0.33, 0.41, 0.49, 0.55; above 1/2 it sleeps, for the whole budget less W.
  source_.wake = true;
  for (int i = 1; i <= 6; ++i) ASSERT_EQ(last(episode(sender, 1e5, no_ring)), "disarm") << i;
  EXPECT_GT(sender.woken_share(), kSenderSleepsAbove);
  EXPECT_EQ(last(episode(sender, 1e5, no_ring)), sleep_event(180us));
  EXPECT_EQ(sender.stats().switches, 2u);
  // While it sleeps, every 16th wait is a block, a probe (this was the first sleeping wait).
  int probes = 0;
  for (int i = 2; i <= 32; ++i) {
    const auto events = episode(sender, 1e5, no_ring);
    const bool probe = i % kBlockProbeEvery == 0;
    probes += probe ? 1 : 0;
    ASSERT_EQ(last(events), probe ? "disarm" : sleep_event(180us)) << i;
  }
  EXPECT_EQ(probes, 2);
  // The probes find control frames still waking it: it keeps sleeping. Once its probes time
  // out, the share falls by 7/8 a probe; below 1/4 it blocks again.
  source_.wake = false;
  int waits = 32;
  while (!sender.prefers_block() && waits < 1000) {
    episode(sender, 1e5, no_ring);
    ++waits;
  }
  EXPECT_LT(sender.woken_share(), kSenderBlocksBelow);
  EXPECT_EQ(sender.stats().switches, 3u);
  // 0.66 after the two woken probes; eight timed-out probes (waits 48 to 160) bring it to
  // 0.23; the next wait blocks.
  EXPECT_EQ(waits, 161);
  EXPECT_EQ(last(episode(sender, 1e5, no_ring)), "disarm");
}

TEST_F(AdaptiveWaitTest, WakeCostFollowsMeasuredOvershoot) {
  BasicAdaptiveWait<FakeClock> wait{adaptive_config()};
  FakeClock::sleep_overshoot = 28us;
  episode(wait, 1e5);
  EXPECT_EQ(wait.wake_cost(), 21us);       // 20 + (28 − 20) / 8
  EXPECT_EQ(wait.wake_deviation(), 2us);   // 0 + (|28 − 20| − 0) / 4
  // The next sleep is L − (W + 2·D) = 200 − 25 = 175 µs.
  const auto events = episode(wait, 1e5);
  EXPECT_EQ(events, std::vector<std::string>{sleep_event(175us)});
  FakeClock::sleep_overshoot = 4us;
  for (int i = 0; i < 30; ++i) episode(wait, 1e5);
  EXPECT_EQ(wait.wake_cost(), 4329ns);  // the EWMA has come down towards 4 µs
  EXPECT_EQ(wait.spin_budget(), 4329ns);  // and the spin it would take before blocking
}

TEST_F(AdaptiveWaitTest, AJitteryTimerWakesEarlierByTwiceItsDeviation) {
  BasicAdaptiveWait<FakeClock> wait{adaptive_config()};
  // Overshoots alternate 10 and 30 µs: the mean stays near 20 µs, the deviation near 10.
  for (int i = 0; i < 40; ++i) {
    FakeClock::sleep_overshoot = i % 2 == 0 ? 10us : 30us;
    episode(wait, 1e5);
  }
  EXPECT_GT(wait.wake_cost(), 19us);
  EXPECT_LT(wait.wake_cost(), 21us);
  EXPECT_GT(wait.wake_deviation(), 9us);
  EXPECT_LT(wait.wake_deviation(), 11us);
  EXPECT_EQ(wait.wake_lead(), wait.wake_cost() + 2 * wait.wake_deviation());
  // The sleep ends W + 2·D before the span — L here, about 40 µs earlier — so the late wake-ups
  // land near L.
  const auto expected = 200us - wait.wake_lead();
  EXPECT_EQ(last(episode(wait, 1e5)), sleep_event(expected));
  // A steady timer brings D back to 0 and the lead to W.
  FakeClock::sleep_overshoot = 20us;
  for (int i = 0; i < 100; ++i) episode(wait, 1e5);
  EXPECT_LT(wait.wake_deviation(), 100ns);
}

TEST_F(AdaptiveWaitTest, ASendingOnlyThreadEndsItsSleepsOnlyWEarly) {
  // The jittery timer of AJitteryTimerWakesEarlierByTwiceItsDeviation, on a thread with no
  // ring, sending a frame every 10 µs: it sleeps towards its own flush deadline, 100 µs away,
  // and ends W early, not W + 2·D (waking 2·D early it would only sleep again for the rest).
  BasicAdaptiveWait<FakeClock> sender{adaptive_config()};
  const double no_ring = std::numeric_limits<double>::infinity();
  for (int i = 0; i < 40; ++i) {
    FakeClock::sleep_overshoot = i % 2 == 0 ? 10us : 30us;
    episode(sender, 1e5, no_ring);
  }
  ASSERT_GT(sender.wake_deviation(), 9us);
  hints_.deadline = FakeClock::now() + 100us;
  // W as it stands before the episode (which updates it): the order in which EXPECT_EQ
  // evaluates its arguments is the compiler's.
  const auto expected = 100us - sender.wake_cost();
  EXPECT_EQ(last(episode(sender, 1e5, no_ring)), sleep_event(expected));
}

TEST_F(AdaptiveWaitTest, SkipsTheSpinWhileItDoesNotPayAndProbesLessOftenWhileProbesFail) {
  BasicAdaptiveWait<FakeClock> wait{adaptive_config()};
  const std::vector<std::string> block = {"arm", wait_event(kMaxBlock), "disarm"};
  // Rare arrivals: the first episode learns to block, without a spin (a skip).
  EXPECT_EQ(episode(wait, 10.0), block);
  // Every episode outlasts its spin: success falls 1 → 7/8 → 0.77 → 0.67 → 0.59 < 2/3.
  for (int i = 2; i <= 5; ++i) {
    EXPECT_EQ(episode(wait, 10.0), concat({repeat("relax", 20), block})) << i;
  }
  EXPECT_LT(wait.spin_success(), kSpinPaysAbove);
  for (int i = 6; i < 16; ++i) EXPECT_EQ(episode(wait, 10.0), block) << i;
  EXPECT_EQ(episode(wait, 10.0), concat({repeat("relax", 20), block}));  // the 16th
  EXPECT_EQ(wait.stats().spin_skips, 11u);

  // Now arrivals come inside the spin: the probes see it and spinning resumes.
  auto caught_in_spin = [&] {
    event_log().clear();
    wait.idle(0, source_, hints_);
    wait.idle(1, source_, hints_);
    return event_log();
  };
  // The probe at episode 16 outlasted its spin (0.59 → 0.51), so the next waits 32 episodes;
  // the caught one at 48 brings the interval back to 16. Three caught probes, at episodes 48,
  // 64 and 80, bring the success back: 0.51 → 0.57 → 0.62 → 0.67.
  const std::set<int> probes = {48, 64, 80};
  int episodes = 16;
  while (wait.spin_success() <= kSpinPaysAbove && episodes < 200) {
    const auto events = caught_in_spin();
    ++episodes;
    // A skipped spin goes straight to the block; a probe relaxes and is caught.
    EXPECT_EQ(events, probes.contains(episodes) ? std::vector<std::string>{"relax"} : block)
        << episodes;
  }
  EXPECT_EQ(episodes, 80);
  EXPECT_EQ(caught_in_spin(), std::vector<std::string>{"relax"});
}

TEST_F(AdaptiveWaitTest, SleepsUntilTheDeadlineLessTheWakeUpCost) {
  BasicAdaptiveWait<FakeClock> wait{adaptive_config()};
  hints_.arrival_rate_hz = 2e4;
  hints_.free_capacity = 100;
  hints_.deadline = FakeClock::now() + 100us;
  event_log().clear();
  wait.idle(0, source_, hints_);
  EXPECT_EQ(event_log(), std::vector<std::string>{sleep_event(80us)});  // wakes at it
  // 10 µs before a deadline, T − W is below the shortest sleep: it sleeps that, not spin.
  hints_.deadline = FakeClock::now() + 10us;
  event_log().clear();
  wait.idle(0, source_, hints_);
  EXPECT_EQ(event_log(), std::vector<std::string>{sleep_event(kMinSleep)});
  // Under a microsecond before it, it polls again.
  hints_.deadline = FakeClock::now() + 500ns;
  event_log().clear();
  wait.idle(0, source_, hints_);
  EXPECT_EQ(event_log(), std::vector<std::string>{"relax"});
}

TEST_F(AdaptiveWaitTest, SpinBudgetIsAQuarterOfTheLatencyBudgetWhenThatIsSmaller) {
  WaitConfig c = adaptive_config();
  c.latency_budget = 40us;
  BasicAdaptiveWait<FakeClock> wait{c};
  EXPECT_EQ(wait.spin_budget(), 10us);
}

TEST_F(AdaptiveWaitTest, BlockRespectsTheArmRace) {
  BasicAdaptiveWait<FakeClock> wait{adaptive_config()};
  hints_.arrival_rate_hz = 1.0;
  source_.arrive_at_arm = 1;
  wait.idle(0, source_, hints_);  // prefers to block at once, and arms
  EXPECT_EQ(event_log(), (std::vector<std::string>{"arm", "disarm"}));
  EXPECT_EQ(wait.stats().failed_arms, 1u);
  EXPECT_EQ(wait.stats().blocks, 0u);
  EXPECT_EQ(source_.poll(), 1);
}

// ---- make_wait, names ------------------------------------------------------------------

TEST(MakeWait, BuildsTheAlternativeOfEachMode) {
  WaitConfig c;
  c.mode = WaitMode::busy;
  EXPECT_TRUE(std::holds_alternative<BusyWait>(make_wait(c)));
  c.mode = WaitMode::block;
  EXPECT_TRUE(std::holds_alternative<BlockWait>(make_wait(c)));
  c.mode = WaitMode::sleep;
  EXPECT_TRUE(std::holds_alternative<SleepWait>(make_wait(c)));
  c.mode = WaitMode::backoff;
  EXPECT_TRUE(std::holds_alternative<BackoffWait>(make_wait(c)));
  c.mode = WaitMode::adaptive;
  EXPECT_TRUE(std::holds_alternative<AdaptiveWait>(make_wait(c)));
}

TEST(MakeWait, PassesTheConfigAndStatsOfFollowsTheAlternative) {
  WaitConfig c;
  c.mode = WaitMode::sleep;
  c.latency_budget = 5us;  // a real sleep, kept short
  AnyWait wait = make_wait(c);
  FakeWaitable source;
  LoadHints hints;  // no arrivals: sleep the whole budget
  std::get<SleepWait>(wait).idle(0, source, hints);
  EXPECT_EQ(stats_of(wait).sleeps, 1u);
  EXPECT_EQ(stats_of(wait).slept, 5us);

  c.mode = WaitMode::adaptive;
  c.spin = 3us;
  c.latency_budget = 40us;
  wait = make_wait(c);
  EXPECT_EQ(std::get<AdaptiveWait>(wait).wake_cost(), 3us);  // min(spin, L/4 = 10 µs)
  EXPECT_EQ(stats_of(wait).polls, 0u);
}

TEST(WaitModeNames, RoundTripEveryMode) {
  const std::vector<std::string> names = {"busy", "block", "sleep", "backoff", "adaptive"};
  ASSERT_EQ(kAllWaitModes.size(), names.size());
  for (std::size_t i = 0; i < names.size(); ++i) {
    EXPECT_EQ(to_string(kAllWaitModes[i]), names[i]);
    const auto parsed = parse_wait_mode(names[i]);
    ASSERT_TRUE(parsed.has_value()) << names[i];
    EXPECT_EQ(parsed.value(), kAllWaitModes[i]);
  }
}

TEST(WaitModeNames, UnknownNameIsAConfigErrorListingTheValidOnes) {
  const auto parsed = parse_wait_mode("spin");
  ASSERT_FALSE(parsed.has_value());
  EXPECT_EQ(parsed.error().category, ErrorCategory::config);
  EXPECT_EQ(parsed.error().code, 0);
  EXPECT_EQ(
      parsed.error().describe(),
      "config error: unknown wait mode 'spin' (valid: busy, block, sleep, backoff, adaptive)");
  EXPECT_FALSE(parse_wait_mode("Busy").has_value());  // names are case-sensitive
  EXPECT_FALSE(parse_wait_mode("").has_value());
  EXPECT_FALSE(parse_wait_mode("block ").has_value());
}

// ---- rate estimator --------------------------------------------------------------------

TEST(RateEstimator, FirstWindowGivesTheRateDirectly) {
  RateEstimator est{1ms, 0.25};
  const TimePoint t0 = TimePoint{} + 5s;
  est.add(10, t0);
  est.add(0, t0 + 500us);
  EXPECT_EQ(est.rate_hz(), 0.0);  // window still open
  est.add(90, t0 + 1ms);          // 100 events in 1 ms
  EXPECT_DOUBLE_EQ(est.rate_hz(), 1e5);
  EXPECT_DOUBLE_EQ(est.peak_hz(), 1e5);
}

TEST(RateEstimator, LaterWindowsBlendWithTheWeightAndThePeakStays) {
  RateEstimator est{1ms, 0.25};
  const TimePoint t0 = TimePoint{} + 5s;
  est.add(0, t0);
  est.add(100, t0 + 1ms);  // 1e5
  est.add(50, t0 + 2ms);   // 5e4 → 0.25 · 5e4 + 0.75 · 1e5
  EXPECT_DOUBLE_EQ(est.rate_hz(), 87'500.0);
  est.add(0, t0 + 4ms);  // 2 ms of silence: 0 → 0.75 · 87 500
  EXPECT_DOUBLE_EQ(est.rate_hz(), 65'625.0);
  EXPECT_DOUBLE_EQ(est.peak_hz(), 1e5);
  est.add(400, t0 + 5ms);  // 4e5 is a new peak
  EXPECT_DOUBLE_EQ(est.peak_hz(), 4e5);
  EXPECT_DOUBLE_EQ(est.rate_hz(), 0.25 * 4e5 + 0.75 * 65'625.0);
}

TEST(RateEstimator, AClockThatStartsAtZeroIsNotMistakenForNoStart) {
  RateEstimator est{1ms, 0.25};
  est.add(100, TimePoint{});  // time_since_epoch() == 0
  est.add(0, TimePoint{} + 1ms);
  EXPECT_DOUBLE_EQ(est.rate_hz(), 1e5);
}

}  // namespace
}  // namespace boreal::transport
