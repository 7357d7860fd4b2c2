// A node with several I/O threads: each thread waits its own way, its links report the mode
// of the thread that runs them, and a stream between two threads of a node goes over an
// inproc ring.
#include <gtest/gtest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "app_test_support.hpp"

namespace {

using nlohmann::json;
using namespace boreal::test;

// Node `mid` has two threads: thread 0 receives `a` (wait block) and runs f1, the union and
// the sink; thread 1 receives `b` (wait sleep) and runs f2, whose output crosses to thread 0.
std::string network(const std::string& f2_thread, const std::string& mid_threads) {
  return "name: threads\n"
         "schemas:\n"
         "  tick: [{seq: i64}, {ts: timestamp}, {key: i64}, {pad: str40}]\n"
         "nodes:\n"
         "  - {name: x, address: \"tcp://127.0.0.1:7401\"}\n"
         "  - {name: y, address: \"tcp://127.0.0.1:7402\"}\n"
         "  - {name: mid, address: \"tcp://127.0.0.1:7403\", threads: " +
         mid_threads +
         "}\n"
         "transport: {medium: tcp, latency_budget_us: 1000}\n"
         "boxes:\n"
         "  - {name: gx, type: source, node: x, out: a, schema: tick, params: {rate: 50000, "
         "tuples: 50000, seed: 1}}\n"
         "  - {name: gy, type: source, node: y, out: b, schema: tick, params: {rate: 50000, "
         "tuples: 50000, seed: 2}}\n"
         "  - {name: f1, type: filter, node: mid, thread: 0, in: a, out: a2, params: {predicate: "
         "\"key < 500\"}}\n"
         "  - {name: f2, type: filter, node: mid, thread: " +
         f2_thread +
         ", in: b, out: b2, params: {predicate: \"key >= 500\"}}\n"
         "  - {name: both, type: union, node: mid, thread: 0, in: [a2, b2], out: c}\n"
         "  - {name: out, type: sink, node: mid, thread: 0, in: c, params: {kind: count}}\n"
         "links:\n"
         "  - {stream: a, wait: block}\n"
         "  - {stream: b, wait: sleep}\n";
}

const json* find(const json& list, const std::string& key, const std::string& value,
                 const std::string& key2 = "", const std::string& value2 = "") {
  for (const json& item : list) {
    if (item.value(key, "") == value && (key2.empty() || item.value(key2, "") == value2))
      return &item;
  }
  return nullptr;
}

TEST(NodeThreads, EachThreadWaitsItsOwnWayAndItsLinksSaySo) {
  TempDir dir;
  const auto file = dir.file("threads.yaml", network("1", "2"));
  const auto lines_path = dir.file("run.jsonl");
  const auto out = run(std::string(BOREAL_BIN) + " launch " + file +
                       " --free-ports --quiet --timeout 60 --json " + lines_path);
  ASSERT_EQ(out.status, 0) << out.text;
  const auto lines = read_json_lines(lines_path);
  const json* mid = nullptr;
  for (const json& line : lines) {
    if (line.value("kind", "") == "node" && line.value("node", "") == "mid") mid = &line;
  }
  ASSERT_NE(mid, nullptr);
  EXPECT_EQ((*mid)["threads"], 2);
  const json& threads = (*mid)["thread_reports"];
  ASSERT_EQ(threads.size(), 2u);
  EXPECT_EQ(threads[0]["thread"], 0);
  EXPECT_EQ(threads[0]["wait"], "block");
  EXPECT_EQ(threads[1]["thread"], 1);
  EXPECT_EQ(threads[1]["wait"], "sleep");
  // block never sleeps, and sleep blocks only after ten budgets with nothing to do (at the
  // stream's start and end): each thread's statistics are its own.
  EXPECT_GT(threads[0]["wait_stats"]["blocks"].get<std::uint64_t>(), 0u);
  EXPECT_EQ(threads[0]["wait_stats"]["sleeps"], 0);
  const auto sleeps = threads[1]["wait_stats"]["sleeps"].get<std::uint64_t>();
  EXPECT_GT(sleeps, 100u);
  EXPECT_LT(threads[1]["wait_stats"]["blocks"].get<std::uint64_t>(), sleeps / 10);
  EXPECT_GT(threads[0]["thread_cpu_s"].get<double>(), 0.0);
  EXPECT_GT(threads[1]["thread_cpu_s"].get<double>(), 0.0);

  const json& links = (*mid)["links"];
  const json* a = find(links, "stream", "a", "direction", "recv");
  const json* b = find(links, "stream", "b", "direction", "recv");
  const json* ring_out = find(links, "stream", "b2", "direction", "send");
  const json* ring_in = find(links, "stream", "b2", "direction", "recv");
  ASSERT_TRUE(a && b && ring_out && ring_in) << links.dump(2);
  EXPECT_EQ((*a)["wait"], "block");
  EXPECT_EQ((*a)["peer"], "x");
  EXPECT_EQ((*b)["wait"], "sleep");
  EXPECT_EQ((*b)["peer"], "y");
  EXPECT_EQ((*ring_out)["medium"], "inproc");
  EXPECT_EQ((*ring_out)["wait"], "sleep");   // thread 1 writes the ring...
  EXPECT_EQ((*ring_out)["peer"], "mid/0");
  EXPECT_EQ((*ring_in)["wait"], "block");    // ...thread 0 reads it
  EXPECT_EQ((*ring_in)["peer"], "mid/1");

  // Every row that passed a filter reached the sink, once.
  const json& boxes = (*mid)["boxes"];
  const json* f1 = find(boxes, "name", "f1");
  const json* f2 = find(boxes, "name", "f2");
  const json* sink = find(boxes, "name", "out");
  ASSERT_TRUE(f1 && f2 && sink);
  EXPECT_EQ((*f1)["thread"], 0);
  EXPECT_EQ((*f2)["thread"], 1);
  EXPECT_EQ((*f1)["tuples_in"], 50000);
  EXPECT_EQ((*f2)["tuples_in"], 50000);
  EXPECT_EQ((*sink)["tuples_in"].get<std::uint64_t>(),
            (*f1)["tuples_out"].get<std::uint64_t>() + (*f2)["tuples_out"].get<std::uint64_t>());
  EXPECT_EQ((*ring_in)["stats"]["tuples"], (*f2)["tuples_out"]);
}

TEST(NodeThreads, LinksThatWaitDifferentlyOnOneThreadAreRefused) {
  TempDir dir;
  const auto file = dir.file("threads.yaml", network("0", "2"));
  const auto out = run(std::string(BOREAL_BIN) + " check " + file);
  EXPECT_EQ(out.status, 2) << out.text;
  EXPECT_NE(out.text.find(":18:14: links[1].stream: stream 'b' waits sleep, spin_us 20, but stream "
                          "'a' waits block, spin_us 20, and both are links of thread 0 of node "
                          "'mid', whose links share its wait: give them the same wait and spin_us, "
                          "or put their boxes on different threads (`threads` on the node, "
                          "`thread` on the box)"),
            std::string::npos)
      << out.text;
}

TEST(NodeThreads, ABoxOnAThreadTheNodeDoesNotHaveIsRefused) {
  TempDir dir;
  const auto file = dir.file("threads.yaml", network("1", "1"));
  const auto out = run(std::string(BOREAL_BIN) + " check " + file);
  EXPECT_EQ(out.status, 2) << out.text;
  EXPECT_NE(out.text.find(":13:49: boxes[3].thread: node 'mid' has 1 thread (0..0), no thread 1 "
                          "(set its `threads`)"),
            std::string::npos)
      << out.text;
}

}  // namespace
