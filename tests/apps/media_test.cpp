// End to end over every medium: the `boreal` binary runs a sending and a receiving node as two
// processes, over tcp and over both libfabric media with each provider present here
// (tcp;ofi_rxm, sockets, net, shm), in every wait mode. Each run must deliver every tuple
// exactly once and in order; the same seed must give byte-identical sink output on every
// medium and in every wait mode; a slow sink must stall the sender without loss; and a node
// must refuse bad senders with their reason while it keeps serving its other links.
//
// A fabric combination is skipped only when the provider is not here or lacks what the
// medium needs; the skip prints libfabric's answer.
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fcntl.h>

#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <boreal/transport/event_loop.hpp>
#include <boreal/transport/fabric_medium.hpp>
#include <boreal/transport/sanitizers.hpp>

#include "apps/app_test_support.hpp"
#include "apps/medium_param.hpp"
#include "launch/launcher.hpp"

namespace {

using nlohmann::json;
using namespace boreal::test;

const json* find_node(const std::vector<json>& lines, const std::string& node) {
  return find_kind(lines, "node", node);
}

std::string medium_name(const Medium& m) {
  std::string name = m.medium;
  if (m.provider != nullptr) name += std::string("_") + m.provider;
  for (auto& c : name) {
    if (c == ';' || c == '-') c = '_';
  }
  return name;
}

constexpr std::array<Medium, 8> kFabricMedia = {{{"fabric-msg", "tcp;ofi_rxm"},
                                                 {"fabric-msg", "sockets"},
                                                 {"fabric-msg", "net"},
                                                 {"fabric-msg", "shm"},
                                                 {"fabric-rma", "tcp;ofi_rxm"},
                                                 {"fabric-rma", "sockets"},
                                                 {"fabric-rma", "net"},
                                                 {"fabric-rma", "shm"}}};
// tcp, then every fabric medium.
constexpr std::array<Medium, 9> kMedia = [] {
  std::array<Medium, 9> all{};
  all[0] = {"tcp", nullptr};
  for (std::size_t i = 0; i < kFabricMedia.size(); ++i) all[i + 1] = kFabricMedia[i];
  return all;
}();
constexpr std::array<const char*, 5> kWaits = {"busy", "block", "sleep", "backoff", "adaptive"};

// Two streams from src to dst: `ticks` carries timestamps (latency is checked), `rows` has
// none, so its content depends on the seed alone and its sink writes it to `output`.
std::string two_streams(const std::string& output, const std::string& transport,
                        const std::string& ticks_params, const std::string& sink_extra = "") {
  return "name: media\n"
         "schemas:\n"
         "  tick: [{seq: i64}, {ts: timestamp}, {key: i64}, {pad: str40}]\n"
         "  row: [{seq: i64}, {key: i64}, {pad: str24}]\n"
         "nodes:\n"
         "  - {name: src, address: \"tcp://127.0.0.1:7101\"}\n"
         "  - {name: dst, address: \"tcp://127.0.0.1:7102\"}\n"
         "transport: " +
         transport +
         "\n"
         "boxes:\n"
         "  - {name: gen, type: source, node: src, out: ticks, schema: tick, params: " +
         ticks_params +
         "}\n"
         "  - {name: rowgen, type: source, node: src, out: rows, schema: row, params: {rate: max, "
         "tuples: 20000, seed: 11, keys: 50}}\n"
         "  - {name: check, type: sink, node: dst, in: ticks, schema: tick, params: {kind: check" +
         sink_extra +
         "}}\n"
         "  - {name: out, type: sink, node: dst, in: rows, schema: row, params: {kind: check, "
         "output: \"" +
         output + "\"}}\n";
}

// The `rows` stream's output as one process makes it over inproc: the reference.
std::string reference_rows(const TempDir& dir) {
  const auto output = dir.file("reference.csv");
  const std::string text =
      "name: reference\n"
      "schemas:\n"
      "  row: [{seq: i64}, {key: i64}, {pad: str24}]\n"
      "nodes:\n"
      "  - {name: solo, address: \"tcp://127.0.0.1:7103\"}\n"
      "boxes:\n"
      "  - {name: rowgen, type: source, node: solo, out: rows, schema: row, params: {rate: max, "
      "tuples: 20000, seed: 11, keys: 50}}\n"
      "  - {name: out, type: sink, node: solo, in: rows, schema: row, params: {kind: check, "
      "output: \"" +
      output + "\"}}\n";
  const auto spec = dir.file("reference.yaml", text);
  const auto out = run(std::string(BOREAL_BIN) + " launch " + spec + " --timeout 60 --quiet");
  EXPECT_EQ(out.status, 0) << out.text;
  return read_file(output);
}

class MediumAndWait : public testing::TestWithParam<std::tuple<Medium, const char*>> {};

TEST_P(MediumAndWait, EveryTupleArrivesOnceInOrderAndTheOutputIsByteIdentical) {
  const auto& [medium, wait] = GetParam();
  if (const auto why = unavailable(medium); !why.empty()) GTEST_SKIP() << why;
  TempDir dir;
  const std::string reference = reference_rows(dir);
  ASSERT_EQ(std::count(reference.begin(), reference.end(), '\n'), 20001);

  const auto output = dir.file("rows.csv");
  const auto spec = dir.file("net.yaml", two_streams(output, "{medium: tcp, wait: block}",
                                                     "{rate: 200000, tuples: 40000, seed: 7}"));
  const auto lines_path = dir.file("run.jsonl");
  const auto out = run(std::string(BOREAL_BIN) + " launch " + spec +
                       " --timeout 60 --free-ports --quiet --wait " + wait + medium_flags(medium) +
                       " --json " + lines_path);
  ASSERT_EQ(out.status, 0) << out.text;

  const auto lines = read_json_lines(lines_path);
  ASSERT_FALSE(lines.empty());
  const json& summary = lines.back();
  ASSERT_EQ(summary.value("kind", ""), "run") << summary.dump();
  EXPECT_EQ(summary["medium"], medium.medium);
  if (medium.provider != nullptr) {
    EXPECT_EQ(summary["provider"], medium.provider);
  } else {
    EXPECT_TRUE(summary["provider"].is_null()) << summary["provider"];
  }
  EXPECT_EQ(summary["wait"], wait);
  EXPECT_EQ(summary["tuples_sent"], 60000);
  EXPECT_EQ(summary["tuples_received"], 60000);
  EXPECT_EQ(summary["lost"], 0);
  EXPECT_EQ(summary["duplicated"], 0);
  EXPECT_EQ(summary["out_of_order"], 0);
  EXPECT_EQ(summary["checksum_ok"], true);
  EXPECT_TRUE(summary["errors"].empty()) << summary["errors"].dump();

  const json* sender = find_node(lines, "src");
  const json* receiver = find_node(lines, "dst");
  ASSERT_NE(sender, nullptr);
  ASSERT_NE(receiver, nullptr);
  ASSERT_EQ((*receiver)["links"].size(), 2u);
  for (const auto& link : (*sender)["links"]) EXPECT_EQ(link["state"], "finished") << link.dump();
  for (const auto& link : (*receiver)["links"]) EXPECT_EQ(link["state"], "finished") << link.dump();
  // No warm-up: the window opens before a link's first tuple, so it holds every one of them,
  // even when a link comes up and delivers inside the same poll.
  EXPECT_EQ((*receiver)["latency_us"]["samples"], 40000);
  EXPECT_EQ((*receiver)["tuples_received_measured"], 60000);
  EXPECT_EQ((*sender)["tuples_sent_measured"], 60000);
  EXPECT_EQ((*receiver)["latency_us"]["negative"], 0);
  EXPECT_TRUE((*receiver)["rejected"].empty()) << (*receiver)["rejected"].dump();
  // The latency breakdown: only tcp stamps arrivals, so only there does the sink split its
  // latency into stages (docs/design.md, "Where the latency goes").
  EXPECT_EQ((*receiver)["latency_stages"].size(), std::string(medium.medium) == "tcp" ? 3u : 0u)
      << (*receiver)["latency_stages"].dump();

  // Same seed, same bytes: the sink's file equals the one-process reference exactly.
  const std::string rows = read_file(output);
  EXPECT_EQ(rows.size(), reference.size());
  EXPECT_TRUE(rows == reference) << "rows.csv differs from the inproc reference";
}

INSTANTIATE_TEST_SUITE_P(Loopback, MediumAndWait,
                         testing::Combine(testing::ValuesIn(kMedia), testing::ValuesIn(kWaits)),
                         [](const auto& param_info) {
                           return medium_name(std::get<0>(param_info.param)) + "_" +
                                  std::get<1>(param_info.param);
                         });

class EveryMedium : public testing::TestWithParam<Medium> {};

TEST_P(EveryMedium, ASlowSinkStallsTheSenderAndNothingIsLost) {
  const Medium& medium = GetParam();
  if (const auto why = unavailable(medium); !why.empty()) GTEST_SKIP() << why;
  TempDir dir;
  // `ticks`: 10 tuples a frame, 8 frames of credit, a sink taking 1 ms a frame.
  const auto spec =
      dir.file("net.yaml", two_streams(dir.file("rows.csv"),
                                       "{medium: tcp, wait: sleep, batch_bytes: 640, window: 8}",
                                       "{rate: max, tuples: 3000}", ", slow_us_per_frame: 1000"));
  const auto lines_path = dir.file("run.jsonl");
  const auto out =
      run(std::string(BOREAL_BIN) + " launch " + spec + " --timeout 60 --free-ports --quiet" +
          medium_flags(medium) + " --json " + lines_path);
  ASSERT_EQ(out.status, 0) << out.text;
  const auto lines = read_json_lines(lines_path);
  const json& summary = lines.back();
  EXPECT_EQ(summary["tuples_received"], 23000);
  EXPECT_EQ(summary["lost"], 0);
  EXPECT_EQ(summary["checksum_ok"], true);
  const json* sender = find_node(lines, "src");
  ASSERT_NE(sender, nullptr);
  const json* ticks = nullptr;
  for (const auto& link : (*sender)["links"]) {
    if (link["stream"] == "ticks") ticks = &link;
  }
  ASSERT_NE(ticks, nullptr) << (*sender)["links"].dump();
  EXPECT_EQ((*ticks)["stats"]["frames"], 300);
  EXPECT_GT((*ticks)["stats"]["credit_stalls"].get<std::uint64_t>(), 0u);
}

INSTANTIATE_TEST_SUITE_P(Loopback, EveryMedium, testing::ValuesIn(kMedia),
                         [](const auto& param_info) { return medium_name(param_info.param); });

// One node's I/O thread serves a tcp link and a fabric link together: `ticks` over tcp,
// `rows` over fabric-rma (its libfabric endpoint on the port after the tcp one), in every wait
// mode that blocks or sleeps on both.
TEST(MixedMedia, OneNodeReceivesOverTcpAndFabricAtOnce) {
  const Medium rma{"fabric-rma", "tcp;ofi_rxm"};
  if (const auto why = unavailable(rma); !why.empty()) GTEST_SKIP() << why;
  TempDir dir;
  const std::string reference = reference_rows(dir);
  for (const char* wait : {"block", "sleep"}) {
    SCOPED_TRACE(wait);
    const auto output = dir.file(std::string("rows-") + wait + ".csv");
    std::string text = two_streams(output, std::string("{medium: tcp, wait: ") + wait + "}",
                                   "{rate: 200000, tuples: 40000, seed: 7}");
    text += "links:\n  - {stream: rows, medium: fabric-rma}\n";
    const auto spec = dir.file("mixed.yaml", text);
    const auto lines_path = dir.file(std::string("mixed-") + wait + ".jsonl");
    const auto out = run(std::string(BOREAL_BIN) + " launch " + spec +
                         " --timeout 60 --free-ports --quiet --json " + lines_path);
    ASSERT_EQ(out.status, 0) << out.text;
    const auto lines = read_json_lines(lines_path);
    const json& summary = lines.back();
    EXPECT_EQ(summary["tuples_received"], 60000);
    EXPECT_EQ(summary["checksum_ok"], true);
    const json* receiver = find_node(lines, "dst");
    ASSERT_NE(receiver, nullptr);
    for (const auto& link : (*receiver)["links"])
      EXPECT_EQ(link["state"], "finished") << link.dump();
    EXPECT_TRUE(read_file(output) == reference) << "rows over fabric-rma differ from the reference";
  }
}

// fabric-msg posts a window of receives per link on its receiving thread's endpoint: two
// links of 1024 and the listener's hello slots are more than rxm's default queue (2048). The
// receiving node sizes the queue before libfabric loads (FI_OFI_RXM_RX_SIZE), says so, and
// both streams arrive in full.
TEST(ManyFabricLinks, TheReceivingNodeSizesRxmsQueueForTheirWindows) {
  const Medium msg{"fabric-msg", "tcp;ofi_rxm"};
  if (const auto why = unavailable(msg); !why.empty()) GTEST_SKIP() << why;
  if (std::getenv("FI_OFI_RXM_RX_SIZE") != nullptr) {
    GTEST_SKIP() << "FI_OFI_RXM_RX_SIZE is set here, and a node leaves it as it is";
  }
  TempDir dir;
  const auto output = dir.file("rows.csv");
  const auto spec = dir.file(
      "wide.yaml", two_streams(output, "{medium: fabric-msg, wait: block, window: 1024, "
                                       "batch_bytes: 512}",
                               "{rate: 200000, tuples: 40000, seed: 7}"));
  const auto lines_path = dir.file("wide.jsonl");
  const auto out = run(std::string(BOREAL_BIN) + " launch " + spec +
                       " --timeout 60 --free-ports --quiet --json " + lines_path);
  ASSERT_EQ(out.status, 0) << out.text;
  EXPECT_NE(out.text.find("node 'dst': FI_OFI_RXM_RX_SIZE=2112 (2 fabric-msg links into one "
                          "thread post 2048 receives on its endpoint; rxm holds 2048 unless "
                          "told)\n"),
            std::string::npos)
      << out.text;
  EXPECT_EQ(out.text.find("node 'src': FI_OFI_RXM_RX_SIZE"), std::string::npos) << out.text;
  const auto lines = read_json_lines(lines_path);
  // Each node's report lists what it set: the queue where it had to, and rxm's bounce buffers
  // (a window per receiving link plus 64, at least 128: runtime/media.hpp) everywhere.
  if (std::getenv("FI_OFI_RXM_MSG_RX_SIZE") == nullptr) {
    std::map<std::string, std::vector<std::string>> settings;
    for (const json& line : lines) {
      if (line.value("kind", "") == "node") settings[line["node"]] = line["settings"];
    }
    EXPECT_EQ(settings["dst"], (std::vector<std::string>{"FI_OFI_RXM_RX_SIZE=2112",
                                                         "FI_OFI_RXM_MSG_RX_SIZE=2112"}));
    EXPECT_EQ(settings["src"], (std::vector<std::string>{"FI_OFI_RXM_MSG_RX_SIZE=128"}));
  }
  const json& summary = lines.back();
  EXPECT_EQ(summary["tuples_received"], 60000);
  EXPECT_EQ(summary["lost"], 0);
  EXPECT_EQ(summary["duplicated"], 0);
  EXPECT_EQ(summary["checksum_ok"], true);
}

// Starts `boreal run FILE --node NODE` with its output in `log`; returns its PID.
pid_t start_node(const std::string& file, const std::string& node, const std::string& log) {
  std::vector<std::string> args = {BOREAL_BIN, "run", file, "--node", node, "--timeout", "60"};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, BOREAL_BIN, &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  return rc == 0 ? pid : -1;
}

int wait_exit(pid_t pid) {
  int status = 0;
  if (::waitpid(pid, &status, 0) != pid) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// A sender that dies mid-stream: its link at the receiving node waits for it to come back
// (reconnect_timeout, 10 s: docs/faults.md) and then fails, naming the loss (its connection's
// error, or the silence) and the wait, while the node keeps serving its other link to the end.
class PeerLoss : public testing::TestWithParam<Medium> {};

TEST_P(PeerLoss, TheLinkOfADeadSenderFailsAndTheOtherLinkFinishes) {
  const Medium& medium = GetParam();
  if (const auto why = unavailable(medium); !why.empty()) GTEST_SKIP() << why;
  TempDir dir;
  const auto port = [] {
    return std::to_string(boreal::runtime::free_tcp_port("127.0.0.1").value());
  };
  const std::string text =
      "name: loss\n"
      "schemas:\n"
      "  tick: [{seq: i64}, {ts: timestamp}, {key: i64}, {pad: str40}]\n"
      "nodes:\n"
      "  - {name: doomed, address: \"tcp://127.0.0.1:" +
      port() +
      "\"}\n"
      "  - {name: steady, address: \"tcp://127.0.0.1:" +
      port() +
      "\"}\n"
      "  - {name: dst, address: \"fabric://" +
      medium.provider + "/127.0.0.1:" + port() +
      "\"}\n"
      "transport: {medium: " +
      medium.medium +
      ", wait: block}\n"
      "boxes:\n"
      "  - {name: a, type: source, node: doomed, out: one, schema: tick, params: {rate: 20000, "
      "tuples: 1000000}}\n"
      "  - {name: b, type: source, node: steady, out: two, schema: tick, params: {rate: 20000, "
      "tuples: 60000}}\n"
      "  - {name: sa, type: sink, node: dst, in: one, schema: tick}\n"
      "  - {name: sb, type: sink, node: dst, in: two, schema: tick}\n";
  const auto spec = dir.file("net.yaml", text);
  const auto dst_log = dir.file("dst.log");
  const pid_t dst = start_node(spec, "dst", dst_log);
  const auto doomed_log = dir.file("doomed.log");
  const pid_t doomed = start_node(spec, "doomed", doomed_log);
  const auto steady_log = dir.file("steady.log");
  const pid_t steady = start_node(spec, "steady", steady_log);
  ASSERT_GT(dst, 0);
  ASSERT_GT(doomed, 0);
  ASSERT_GT(steady, 0);
  // Kill it mid-stream: once it reports tuples sent (its link is established), not after a
  // fixed time, which a busy machine may spend connecting.
  EXPECT_TRUE(await_progress(doomed_log, "doomed", "tuples_sent")) << read_file(doomed_log);
  ASSERT_EQ(::kill(doomed, SIGKILL), 0);  // a process this test started
  EXPECT_EQ(wait_exit(doomed), 128 + SIGKILL);
  EXPECT_EQ(wait_exit(steady), 0) << read_file(steady_log);
  EXPECT_EQ(wait_exit(dst), 1) << read_file(dst_log);  // a link failed

  const std::string log = read_file(dst_log);
  const json* report = nullptr;
  const std::vector<json> lines = json_lines_of(log);
  report = find_node(lines, "dst");
  ASSERT_NE(report, nullptr) << log;
  ASSERT_EQ((*report)["links"].size(), 2u);
  for (const auto& link : (*report)["links"]) {
    if (link["stream"] == "one") {
      EXPECT_EQ(link["state"], "failed");
      const auto error = link["error"].get<std::string>();
      // How the loss is noticed is the provider's timing: rxm may fail the posted receives
      // with the connection (with the errno of how the kernel closed it: not connected, or
      // reset), or report nothing, and then the peer's silence tells.
      const bool cause_named =
          error.find("peer silent for 5000 ms (gone, or the network is down); ") !=
              std::string::npos ||
          error.find(": completion (provider " + std::string(medium.provider) + "): ") !=
              std::string::npos;
      EXPECT_TRUE(cause_named) << link.dump() << "\n" << log;
      EXPECT_NE(error.find("the sender did not come back within 10000 ms (after frame "),
                std::string::npos)
          << link.dump() << "\n" << log;
    } else {
      EXPECT_EQ(link["state"], "finished") << link.dump() << "\n" << log;
      EXPECT_EQ(link["stats"]["tuples"], 60000) << log;
    }
  }
  EXPECT_EQ((*report)["lost"], 0) << log;
}

INSTANTIATE_TEST_SUITE_P(Loopback, PeerLoss,
                         testing::Values(Medium{"fabric-msg", "tcp;ofi_rxm"},
                                         Medium{"fabric-rma", "tcp;ofi_rxm"}),
                         [](const auto& param_info) { return medium_name(param_info.param); });

// A node receiving two streams over a fabric medium, while another process sends it streams
// with the wrong schema and a stream it does not expect: each is refused with its reason, and
// both good streams arrive in full. (tcp: launch_test's BadInput sends it raw garbage too.)
class EveryFabricMedium : public testing::TestWithParam<Medium> {};

TEST_P(EveryFabricMedium, BadSendersAreRefusedAndTheGoodStreamsArriveInFull) {
  const Medium& medium = GetParam();
  if (std::string(medium.medium) == "fabric-rma" && std::string(medium.provider) == "shm") {
    // Seen twice in about 55 runs: the receiving node died (SIGSEGV) reading a shm completion
    // whose op_context was none of ours (0x1), after the refused senders had connected.
    // libfabric 1.17's shm completes some remote writes with op_context 0x1 instead of NULL
    // once a new peer has connected while writes flow, which drain_cq takes for an OpContext:
    // scripts/sanitizers/shm_context_repro.c shows it with libfabric alone (`refused 50`).
    // boreal now reads a context only if it is one it posted (fabric_medium::holds()), but the
    // same program shows a second shm crash, inside fi_cq_read, when a peer exits before the
    // receiver took its connection request (`refused 20 connreq-only linger 0`) — what a
    // refused sender does — so this one combination still does not run in CI.
    GTEST_SKIP() << "fabric-rma over shm with a refused sender: libfabric's shm crashes in "
                    "fi_cq_read when a peer exits early (scripts/sanitizers/shm_context_repro.c), "
                    "see README";
  }
  if (const auto why = unavailable(medium); !why.empty()) GTEST_SKIP() << why;
  TempDir dir;
  const auto src_port = boreal::runtime::free_tcp_port("127.0.0.1").value();
  const auto dst_port = boreal::runtime::free_tcp_port("127.0.0.1").value();
  const std::string dst_address =
      "fabric://" + std::string(medium.provider) + "/127.0.0.1:" + std::to_string(dst_port);
  // The rogue (below) tries for this long; dst serves the good streams (20,000 tuples/s
  // each) for 2 s longer. Under ThreadSanitizer, beside other tests, its three links took more
  // than 3 s to connect (rxm refusing the hellos while it connected).
  const int rogue_s = boreal::transport::kUnderThreadSanitizer ? 8 : 3;
  const std::uint64_t tuples_each = 20000ULL * static_cast<std::uint64_t>(rogue_s + 2);
  // $SRC, $DST, $MEDIUM and $TUPLES stand for the sending node's address, the receiving
  // node's, the medium under test and each good stream's tuples.
  const auto fill = [&](std::string text) {
    const std::pair<std::string, std::string> values[] = {
        {"$SRC", "tcp://127.0.0.1:" + std::to_string(src_port)},
        {"$DST", dst_address},
        {"$MEDIUM", std::string(medium.medium)},
        {"$TUPLES", std::to_string(tuples_each)}};
    for (const auto& [key, value] : values) {
      for (auto at = text.find(key); at != std::string::npos;
           at = text.find(key, at + value.size())) {
        text.replace(at, key.size(), value);
      }
    }
    return text;
  };
  // One cluster token in both files, so that the rogue's hellos are refused for their schema
  // and stream id (with the default, a hash of each file's name, the token refuses them first).
  const std::string good = fill(R"(name: good
cluster_token: 5
schemas:
  tick: [{seq: i64}, {ts: timestamp}, {key: i64}, {pad: str40}]
nodes:
  - {name: src, address: "$SRC"}
  - {name: dst, address: "$DST"}
transport: {medium: $MEDIUM, wait: block}
boxes:
  - {name: a, type: source, node: src, out: one, schema: tick,
     params: {rate: 20000, tuples: $TUPLES}}
  - {name: b, type: source, node: src, out: two, schema: tick,
     params: {rate: 20000, tuples: $TUPLES}}
  - {name: sa, type: sink, node: dst, in: one, schema: tick}
  - {name: sb, type: sink, node: dst, in: two, schema: tick}
)");
  // Stream 1 ('one') with another schema; stream 3 ('three'), which dst does not expect.
  const std::string bad = fill(R"(name: bad
cluster_token: 5
schemas:
  other: [{seq: i64}, {ts: timestamp}, {pad: str48}]
nodes:
  - {name: evil, address: "$SRC"}
  - {name: dst, address: "$DST"}
transport: {medium: $MEDIUM, wait: block}
boxes:
  - {name: a, type: source, node: evil, out: one, schema: other, params: {rate: 1000, tuples: 10}}
  - {name: b, type: source, node: evil, out: two, schema: other, params: {rate: 1000, tuples: 10}}
  - {name: c, type: source, node: evil, out: three, schema: other,
     params: {rate: 1000, tuples: 10}}
  - {name: sa, type: sink, node: dst, in: one, schema: other}
  - {name: sc, type: sink, node: dst, in: three, schema: other}
  - {name: sb, type: sink, node: dst, in: two, schema: other}
)");
  const auto good_spec = dir.file("good.yaml", good);
  const auto bad_spec = dir.file("bad.yaml", bad);
  const auto lines_path = dir.file("run.jsonl");

  Output launched;
  std::thread launcher([&] {
    launched = run(std::string(BOREAL_BIN) + " launch " + good_spec +
                   " --timeout 60 --quiet --json " + lines_path);
  });
  // The rogue starts once dst is receiving (its first progress line: within a second of its
  // start), so that all its hellos come while dst serves the good streams. A rogue started
  // beside the launch, with good streams of 1.5 s, reached a dst already finished under
  // ThreadSanitizer beside other tests (2 of 3 refused, or 1).
  EXPECT_TRUE(await_progress(lines_path, "dst", "tuples_received")) << read_file(lines_path);
  // The bad sender gets no credit and gives up by itself.
  const auto rogue = run(std::string(BOREAL_BIN) + " run " + bad_spec + " --node evil --timeout " +
                         std::to_string(rogue_s));
  launcher.join();
  ASSERT_EQ(launched.status, 0) << launched.text;
  EXPECT_EQ(rogue.status, 1) << rogue.text;

  const auto lines = read_json_lines(lines_path);
  const json* receiver = find_node(lines, "dst");
  ASSERT_NE(receiver, nullptr);
  EXPECT_EQ((*receiver)["tuples_received"], 2 * tuples_each);
  EXPECT_EQ((*receiver)["lost"], 0);
  EXPECT_EQ((*receiver)["duplicated"], 0);
  for (const auto& link : (*receiver)["links"]) EXPECT_EQ(link["state"], "finished") << link.dump();
  const auto& rejected = (*receiver)["rejected"];
  const std::string all = rejected.dump();
  // 'one' and 'two' with the wrong schema, 'three' unknown (id 3; dst expects 1 and 2).
  ASSERT_EQ(rejected.size(), 3u) << all << "\n--- the rogue's output:\n" << rogue.text;
  EXPECT_NE(all.find("stream 1 'one': schema hash"), std::string::npos) << all;
  EXPECT_NE(all.find("stream 2 'two': schema hash"), std::string::npos) << all;
  EXPECT_NE(all.find("unknown stream id 3 (this node expects 1, 2)"), std::string::npos) << all;
  EXPECT_EQ(lines.back()["checksum_ok"], true);
}

INSTANTIATE_TEST_SUITE_P(Loopback, EveryFabricMedium, testing::ValuesIn(kFabricMedia),
                         [](const auto& param_info) { return medium_name(param_info.param); });

}  // namespace
