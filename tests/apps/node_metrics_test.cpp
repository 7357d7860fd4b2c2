// A node's live metrics end to end inside one process: run_node() with a metrics port, scraped
// over HTTP from another thread while its two I/O threads stream tuples over an inproc ring.
// The counters must grow between scrapes and the report must name the port. Under
// ThreadSanitizer this is the check that publishing (the I/O threads) and scraping (the
// server's thread) share nothing unguarded.
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <sstream>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "apps/http_test_client.hpp"
#include "launch/launcher.hpp"
#include "runtime/node.hpp"
#include "spec/network_spec.hpp"

namespace {

using namespace boreal::runtime;
using namespace boreal::test;
using namespace std::chrono_literals;

// Thread 1 generates, thread 0 counts: the stream crosses threads over an inproc ring.
std::string one_node(std::uint16_t port) {
  return "name: live\n"
         "schemas:\n"
         "  tick: [{seq: i64}, {ts: timestamp}, {key: i64}, {pad: str40}]\n"
         "nodes:\n"
         "  - {name: solo, address: \"tcp://127.0.0.1:" + std::to_string(port) + "\", threads: 2}\n"
         "transport: {wait: block, latency_budget_us: 2000}\n"
         "boxes:\n"
         "  - {name: gen, type: source, node: solo, thread: 1, out: ticks, schema: tick,"
         " params: {rate: 20000, duration_s: 3, seed: 3}}\n"
         "  - {name: count, type: sink, node: solo, thread: 0, in: ticks, params: {kind: count}}\n";
}

// The value of the first series of `text` whose line starts with `name{` and holds `has`.
double value_of(const std::string& text, const std::string& name, const std::string& has) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(name + "{", 0) == 0 && line.find(has) != std::string::npos) {
      return std::strtod(line.c_str() + line.rfind(' ') + 1, nullptr);
    }
  }
  return -1;
}

TEST(NodeMetrics, CountersGrowWhileTheNodeRunsAndTheReportNamesThePort) {
  auto node_port = free_tcp_port("127.0.0.1", 4);
  auto metrics_port = free_tcp_port("127.0.0.1");
  ASSERT_TRUE(node_port && metrics_port);
  auto spec = parse_network(one_node(node_port.value()), "live.yaml");
  ASSERT_TRUE(spec) << spec.error().joined();
  NodeOptions options;
  options.node = "solo";
  options.progress_interval = 0ms;
  options.timeout = 60s;
  options.metrics_port = metrics_port.value();
  std::atomic<bool> stop{false};
  std::ostringstream out;
  std::optional<NodeReport> report;
  std::string error;
  std::thread node([&] {
    auto result = run_node(spec.value(), options, stop, out);
    if (result) {
      report = std::move(result).value();
    } else {
      error = result.error().message;
    }
  });

  // Scrape until the ring has carried tuples twice, the second time more.
  const std::string ring = "direction=\"send\",medium=\"inproc\"";
  std::vector<double> seen;
  HttpReply reply;
  const auto give_up = std::chrono::steady_clock::now() + 20s;
  while (seen.size() < 2 && std::chrono::steady_clock::now() < give_up) {
    std::this_thread::sleep_for(200ms);
    reply = http_get(metrics_port.value(), "/metrics");
    if (reply.status != 200) continue;
    const double tuples = value_of(reply.body, "boreal_link_tuples_total", ring);
    if (tuples > 0 && (seen.empty() || tuples > seen.back())) seen.push_back(tuples);
  }
  stop = true;  // no need to wait for the rest of the stream
  node.join();

  ASSERT_EQ(seen.size(), 2U) << reply.status << " " << reply.error << "\n" << reply.body;
  EXPECT_EQ(reply.content_type, "text/plain; version=0.0.4");
  EXPECT_GT(value_of(reply.body, "boreal_node_tuples_sent_total", "node=\"solo\""), 0);
  EXPECT_GT(value_of(reply.body, "boreal_box_tuples_out_total", "box=\"gen\""), 0);
  EXPECT_GT(value_of(reply.body, "boreal_box_tuples_in_total", "box=\"count\""), 0);
  EXPECT_GT(value_of(reply.body, "boreal_process_resident_memory_bytes", "node=\"solo\""), 0);
  EXPECT_GE(value_of(reply.body, "boreal_link_thread_cpu_seconds_total", ring), 0);
  ASSERT_TRUE(report) << error;
  ASSERT_TRUE(report->metrics_port);
  EXPECT_EQ(*report->metrics_port, metrics_port.value());
  // The server went with the node.
  EXPECT_EQ(http_get(metrics_port.value(), "/metrics").status, 0);
}

}  // namespace
