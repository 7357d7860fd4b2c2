// The event-loop study harness (apps/src/runtime/loopstudy/): every strategy carries an
// exact, verified tuple count over real loopback TCP and uses the syscalls its strategy is
// made of. Assertions are on counts only, never on timing.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <numeric>
#include <string>
#include <vector>

#include "loopstudy/loop_study.hpp"

namespace {

using boreal::runtime::loopstudy::run_study;
using boreal::runtime::loopstudy::strategies;
using boreal::runtime::loopstudy::StudyConfig;
using boreal::runtime::loopstudy::StudyResult;
using boreal::transport::ErrorCategory;
using namespace std::chrono_literals;

std::uint64_t count(const std::map<std::string, std::uint64_t>& calls, const std::string& kind) {
  const auto it = calls.find(kind);
  return it == calls.end() ? 0 : it->second;
}

StudyConfig small(const std::string& strategy) {
  StudyConfig config;
  config.strategy = strategy;
  config.rate = 20000;
  config.duration = 300ms;
  config.links = 2;
  return config;
}

// 20000 tuples/s × 0.3 s, as the sender computes it: round(rate × duration).
constexpr std::uint64_t kTuples = 6000;

TEST(LoopStudy, ListsTheStrategiesInAFixedOrder) {
  std::vector<std::string> names;
  for (const auto& s : strategies()) {
    names.push_back(s.name);
    EXPECT_FALSE(s.description.empty()) << s.name;
    EXPECT_EQ(s.description.back(), '.') << s.name;
  }
  EXPECT_EQ(names, (std::vector<std::string>{"epoll-rearm", "epoll-lazy", "epoll-et",
                                             "uring-batched", "recycled", "thread-per-link",
                                             "sigio"}));
}

TEST(LoopStudy, UnknownStrategyIsAConfigErrorListingTheValidOnes) {
  auto result = run_study(small("kqueue"));
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().category, ErrorCategory::config);
  EXPECT_EQ(result.error().message,
            "unknown loop-study strategy 'kqueue' (valid: epoll-rearm, epoll-lazy, epoll-et, "
            "uring-batched, recycled, thread-per-link, sigio)");
}

TEST(LoopStudy, RejectsImpossibleShapes) {
  auto config = small("epoll-et");
  config.links = 0;
  auto result = run_study(config);
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().message, "loop study: links must lie in 1..64");
  config = small("epoll-et");
  config.tuple_bytes = 8;
  result = run_study(config);
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().message,
            "loop study: tuple_bytes must be >= 16 (sequence and timestamp)");
}

class EveryStrategy : public testing::TestWithParam<std::string> {};

TEST_P(EveryStrategy, DeliversExactlyTheScheduledTuplesAndCountsItsSyscalls) {
  auto run = run_study(small(GetParam()));
  ASSERT_TRUE(run) << run.error().describe();
  const StudyResult& r = run.value();
  EXPECT_EQ(r.strategy, GetParam());
  EXPECT_EQ(r.tuples, kTuples);
  EXPECT_GT(r.frames, 0u);
  EXPECT_GT(r.syscalls_per_tuple, 0.0);
  const std::uint64_t total = std::accumulate(
      r.syscalls.begin(), r.syscalls.end(), std::uint64_t{0},
      [](std::uint64_t sum, const auto& kind) { return sum + kind.second; });
  EXPECT_DOUBLE_EQ(r.syscalls_per_tuple, static_cast<double>(total) / static_cast<double>(kTuples));
  EXPECT_GT(count(r.sender_syscalls, "send"), 0u);
  EXPECT_GT(count(r.receiver_syscalls, "recv"), 0u);
  EXPECT_EQ(count(r.sender_syscalls, "connect"), 2u);
  EXPECT_EQ(count(r.receiver_syscalls, "accept"), 2u);
  EXPECT_EQ(r.allocations_after_warmup, 0u);
  EXPECT_GT(r.p99_us, 0.0);
  EXPECT_GE(r.p99_us, r.p50_us);

  const auto& tx = r.sender_syscalls;
  const auto& rx = r.receiver_syscalls;
  const std::string& s = GetParam();
  if (s == "epoll-rearm") {
    // One EPOLL_CTL_ADD per link, then an arm and a disarm around every send.
    EXPECT_EQ(count(tx, "epoll_ctl"), 2 + 2 * count(tx, "send"));
    EXPECT_EQ(count(rx, "epoll_ctl"), 4u);  // two listeners, two connections, once each
  } else if (s == "epoll-lazy") {
    EXPECT_GT(r.epoll_ctl_saved, 0u);
    EXPECT_EQ(count(rx, "epoll_ctl"), 4u);
  } else if (s == "epoll-et" || s == "recycled") {
    EXPECT_EQ(count(tx, "epoll_ctl"), 2u);  // registered once, nothing in steady state
    EXPECT_EQ(count(rx, "epoll_ctl"), 4u);
  } else if (s == "uring-batched") {
    EXPECT_GT(count(r.syscalls, "io_uring_enter"), 0u);
    EXPECT_EQ(count(r.syscalls, "epoll_wait"), 0u);
    EXPECT_EQ(count(r.syscalls, "epoll_ctl"), 0u);
  } else if (s == "thread-per-link") {
    EXPECT_EQ(count(r.syscalls, "epoll_wait"), 0u);
    EXPECT_EQ(count(r.syscalls, "io_uring_enter"), 0u);
    EXPECT_EQ(count(r.syscalls, "sigwaitinfo"), 0u);
  } else if (s == "sigio") {
    EXPECT_GT(count(rx, "sigwaitinfo"), 0u);
    // O_NONBLOCK on each listener, then F_SETSIG, F_SETOWN_EX, F_SETFL on every socket.
    EXPECT_EQ(count(rx, "fcntl"), 2u + 4 * 3);
    EXPECT_EQ(count(tx, "fcntl"), 2u + 2 * 3);  // O_NONBLOCK at connect, then the same three
    EXPECT_EQ(count(r.syscalls, "epoll_wait"), 0u);
  }
  if (s != "epoll-lazy") {
    EXPECT_EQ(r.epoll_ctl_saved, 0u);
  }
}

INSTANTIATE_TEST_SUITE_P(LoopStudy, EveryStrategy,
                         testing::Values("epoll-rearm", "epoll-lazy", "epoll-et", "uring-batched",
                                         "recycled", "thread-per-link", "sigio"),
                         [](const testing::TestParamInfo<std::string>& param) {
                           std::string name = param.param;
                           for (auto& c : name) {
                             if (c == '-') c = '_';
                           }
                           return name;
                         });

// A run whose connections are replaced every 20 frames; checks the count and returns the
// connections made and the allocations after warm-up.
std::pair<std::uint64_t, std::uint64_t> reconnecting_run(const std::string& strategy) {
  auto config = small(strategy);
  config.reconnect_every = 20;
  auto run = run_study(config);
  EXPECT_TRUE(run) << run.error().describe();
  if (!run) return {0, 0};
  EXPECT_EQ(run.value().tuples, kTuples);
  const auto connections = count(run.value().sender_syscalls, "connect");
  EXPECT_GT(connections, 2u);
  EXPECT_EQ(count(run.value().receiver_syscalls, "accept"), connections);
  return {connections, run.value().allocations_after_warmup};
}

TEST(LoopStudy, RecycledReconnectsWithoutAllocating) {
  EXPECT_EQ(reconnecting_run("recycled").second, 0u);
}

TEST(LoopStudy, EdgeTriggeredAllocatesForEveryReconnection) {
  const auto [connections, allocations] = reconnecting_run("epoll-et");
  // Both ends allocate their structures for every connection after the first of each link.
  EXPECT_EQ(allocations, 2 * (connections - 2));
}

}  // namespace
