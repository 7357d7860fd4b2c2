// Tuples of 1 KiB, 8 KiB, 32 KiB and the largest size (ops::kMaxTupleBytes, 65496 bytes) end
// to end: `boreal launch` runs a sending and a receiving node as two processes, over tcp and
// over both libfabric media (provider tcp;ofi_rxm). The sending node has a generator source and
// a CSV source whose strings fill the big field; the receiving node checks both streams, and
// writes the CSV stream back out, which must equal the file read byte for byte. Then the
// limits: what `boreal check` and the flags say about a tuple beyond the limit or beyond the
// frame (batch_bytes).
//
// A fabric medium is skipped only when the provider is not here or lacks what the medium
// needs; the skip prints libfabric's answer.
#include <cstdint>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <boreal/ops/schema.hpp>
#include <boreal/transport/event_loop.hpp>
#include <boreal/transport/fabric_medium.hpp>

#include "apps/app_test_support.hpp"
#include "apps/medium_param.hpp"

namespace {

using nlohmann::json;
using namespace boreal::test;

constexpr int kGenerated = 2000;  // tuples of the generator's stream
constexpr int kLines = 40;        // rows of the CSV file
// The largest frame payload every medium takes (fabric-rma: 65535-byte frames, 32 of header),
// so every size below, the largest tuple included, travels in the same frames.
constexpr std::uint32_t kBatchBytes = 65503;

// Line i's text for a strN field of `width` bytes: letters, full width on line 0 and shorter
// by a varying amount after; every fifth line holds a delimiter and quotes.
std::string line_text(int i, std::uint32_t width) {
  std::string text(width - static_cast<std::uint32_t>(i * 37 % 500), ' ');
  for (std::size_t j = 0; j < text.size(); ++j) text[j] = static_cast<char>('A' + (i + j) % 26);
  if (i % 5 == 2) {
    text[10] = ',';
    text[text.size() / 2] = '"';
    text[text.size() - 1] = '"';
  }
  return text;
}

// The CSV file of `kLines` rows of the schema seq:i64,text:strW, as CsvWriter writes it (a
// header; a field holding the delimiter or a quote in quotes, with "" for a quote), so that
// the sink's copy must equal it byte for byte.
std::string lines_csv(std::uint32_t width) {
  std::string csv = "seq,text\n";
  for (int i = 0; i < kLines; ++i) {
    const std::string text = line_text(i, width);
    csv += std::to_string(i) + ",";
    if (text.find_first_of(",\"") == std::string::npos) {
      csv += text;
    } else {
      csv += '"';
      for (char c : text) csv += c == '"' ? std::string("\"\"") : std::string(1, c);
      csv += '"';
    }
    csv += '\n';
  }
  return csv;
}

// Two streams of `tuple_bytes`-byte tuples from src to dst: `bigs` from the generator (its
// string field left NUL), `lines` from the CSV file `in`, written back to `out` by its sink.
std::string big_network(std::uint32_t tuple_bytes, const std::string& in, const std::string& out) {
  const std::string blob = "str" + std::to_string(tuple_bytes - 24);
  const std::string text = "str" + std::to_string(tuple_bytes - 8);
  return "name: big\n"
         "schemas:\n"
         "  big: [{seq: i64}, {ts: timestamp}, {key: i64}, {blob: " +
         blob +
         "}]\n"
         "  line: [{seq: i64}, {text: " +
         text +
         "}]\n"
         "nodes:\n"
         "  - {name: src, address: \"tcp://127.0.0.1:7301\"}\n"
         "  - {name: dst, address: \"tcp://127.0.0.1:7302\"}\n"
         "transport: {medium: tcp, wait: block, batch_bytes: " +
         std::to_string(kBatchBytes) +
         "}\n"
         "boxes:\n"
         "  - {name: gen, type: source, node: src, out: bigs, schema: big, params: {rate: max, "
         "tuples: " +
         std::to_string(kGenerated) +
         ", seed: 5}}\n"
         "  - {name: file, type: source, node: src, out: lines, schema: line, params: {kind: csv, "
         "path: \"" +
         in +
         "\"}}\n"
         "  - {name: check, type: sink, node: dst, in: bigs, schema: big, params: {kind: check}}\n"
         "  - {name: copy, type: sink, node: dst, in: lines, schema: line, params: {kind: check, "
         "output: \"" +
         out + "\"}}\n";
}

class BigTuplesEndToEnd : public testing::TestWithParam<std::tuple<Medium, std::uint32_t>> {};

TEST_P(BigTuplesEndToEnd, EveryTupleArrivesOnceWithItsBytes) {
  const auto& [medium, tuple_bytes] = GetParam();
  if (const auto why = unavailable(medium); !why.empty()) GTEST_SKIP() << why;
  TempDir dir;
  const std::string csv = lines_csv(tuple_bytes - 8);
  const auto in = dir.file("lines.csv", csv);
  const auto out = dir.file("copy.csv");
  const auto spec = dir.file("big.yaml", big_network(tuple_bytes, in, out));
  const auto lines_path = dir.file("run.jsonl");
  const auto ran = run(std::string(BOREAL_BIN) + " launch " + spec +
                       " --timeout 60 --free-ports --quiet" + medium_flags(medium) + " --json " +
                       lines_path);
  ASSERT_EQ(ran.status, 0) << ran.text;

  const auto lines = read_json_lines(lines_path);
  ASSERT_FALSE(lines.empty());
  const json& summary = lines.back();
  ASSERT_EQ(summary.value("kind", ""), "run") << summary.dump();
  EXPECT_EQ(summary["medium"], medium.medium);
  EXPECT_EQ(summary["tuple_bytes"], tuple_bytes);  // the file's first stream between nodes
  EXPECT_EQ(summary["batch_bytes"], kBatchBytes);
  EXPECT_EQ(summary["tuples_sent"], kGenerated + kLines);
  EXPECT_EQ(summary["tuples_received"], kGenerated + kLines);
  EXPECT_EQ(summary["lost"], 0);
  EXPECT_EQ(summary["duplicated"], 0);
  EXPECT_EQ(summary["out_of_order"], 0);
  EXPECT_EQ(summary["checksum_ok"], true);
  EXPECT_TRUE(summary["errors"].empty()) << summary["errors"].dump();

  // The content checksums themselves: what the sources made is what the sinks got.
  const json* sender = find_kind(lines, "node", "src");
  const json* receiver = find_kind(lines, "node", "dst");
  ASSERT_NE(sender, nullptr);
  ASSERT_NE(receiver, nullptr);
  EXPECT_EQ((*sender)["checksum_sent"], (*receiver)["checksum_received"]);
  EXPECT_NE((*sender)["checksum_sent"], 0);
  EXPECT_EQ((*sender)["bytes_sent"], std::uint64_t{tuple_bytes} * (kGenerated + kLines));
  EXPECT_EQ((*receiver)["bytes_received"], std::uint64_t{tuple_bytes} * (kGenerated + kLines));
  for (const auto& link : (*receiver)["links"]) EXPECT_EQ(link["state"], "finished") << link.dump();

  // The strings themselves: the CSV stream comes back out byte for byte.
  const std::string copy = read_file(out);
  EXPECT_EQ(copy.size(), csv.size());
  EXPECT_TRUE(copy == csv) << "copy.csv differs from lines.csv";
}

constexpr Medium kMedia[] = {
    {"tcp", nullptr}, {"fabric-msg", "tcp;ofi_rxm"}, {"fabric-rma", "tcp;ofi_rxm"}};

INSTANTIATE_TEST_SUITE_P(
    Loopback, BigTuplesEndToEnd,
    testing::Combine(testing::ValuesIn(kMedia),
                     testing::Values(1024u, 8192u, 32768u, boreal::ops::kMaxTupleBytes)),
    [](const auto& param_info) {
      std::string name = std::get<0>(param_info.param).medium;
      for (auto& c : name) {
        if (c == '-') c = '_';
      }
      return name + "_" + std::to_string(std::get<1>(param_info.param));
    });

// ---- the limits, as `boreal check` and the flags report them ----------------------------

// A generator-only network of `schema`'s tuples from a to b; `transport` is the block's text.
std::string one_stream(const std::string& schema, const std::string& transport = "{}") {
  return "name: limits\n"
         "schemas:\n"
         "  big: " +
         schema +
         "\n"
         "nodes:\n"
         "  - {name: a, address: \"tcp://127.0.0.1:7311\"}\n"
         "  - {name: b, address: \"tcp://127.0.0.1:7312\"}\n"
         "transport: " +
         transport +
         "\n"
         "boxes:\n"
         "  - {name: gen, type: source, node: a, out: bigs, schema: big, params: {rate: max, "
         "tuples: 1000}}\n"
         "  - {name: check, type: sink, node: b, in: bigs, schema: big, params: {kind: check}}\n";
}

struct Command {
  int status = -1;
  std::string out;
  std::string err;
};

// Runs `boreal check FILE FLAGS`, its stdout and stderr apart.
Command check(const TempDir& dir, const std::string& file, const std::string& flags = "") {
  const std::string out_path = dir.file("stdout.txt");
  const std::string err_path = dir.file("stderr.txt");
  // run() sends the command's stderr to its pipe, so the redirections go inside a subshell.
  const auto ran = run("(" + std::string(BOREAL_BIN) + " check " + file + flags + " >" +
                       out_path + " 2>" + err_path + ")");
  return {ran.status, read_file(out_path), read_file(err_path)};
}

TEST(BigTupleLimits, AStringBeyondTheLargestTupleIsLocatedAndNamesTheLimit) {
  TempDir dir;
  const auto file =
      dir.file("wide.yaml", one_stream("[{seq: i64}, {blob: str65497}]"));
  const Command ran = check(dir, file);
  EXPECT_EQ(ran.status, 2);
  EXPECT_EQ(ran.out, "");
  EXPECT_EQ(ran.err, file + ":3:21: schemas.big[1]: string width of field 'blob' is 65497; strN "
                            "needs 1 <= N <= 65496 (the largest tuple, one frame's payload on "
                            "every medium)\n");
}

TEST(BigTupleLimits, ATupleBeyondTheLargestIsLocatedAndNamesTheLimit) {
  TempDir dir;
  const auto file =
      dir.file("long.yaml", one_stream("[{seq: i64}, {a: str40000}, {b: str25489}]"));
  const Command ran = check(dir, file);
  EXPECT_EQ(ran.status, 2);
  EXPECT_EQ(ran.out, "");
  EXPECT_EQ(ran.err, file + ":3:36: schemas.big[2]: with field 'b' the tuple needs 65504 bytes; "
                            "a tuple holds at most 65496 (one frame's payload on every medium)\n");
}

TEST(BigTupleLimits, ATupleBeyondTheDefaultFrameSaysWhatToSet) {
  TempDir dir;
  const auto file = dir.file("frame.yaml", one_stream("[{seq: i64}, {blob: str39992}]"));
  const Command ran = check(dir, file);
  EXPECT_EQ(ran.status, 2);
  EXPECT_EQ(ran.out, "");
  EXPECT_EQ(ran.err, file + ":9:45: boxes[0].out: the default batch_bytes (32768) cannot hold "
                            "one tuple of stream 'bigs' (40000 bytes); set transport.batch_bytes "
                            "to 40000 or more\n");
  // As told: the file is then valid.
  const auto fixed = dir.file(
      "fixed.yaml", one_stream("[{seq: i64}, {blob: str39992}]", "{batch_bytes: 40000}"));
  const Command ok = check(dir, fixed);
  EXPECT_EQ(ok.status, 0) << ok.err;
  // A batch_bytes that is set and too small is blamed where it is written.
  const auto small = dir.file(
      "small.yaml", one_stream("[{seq: i64}, {blob: str39992}]", "{batch_bytes: 39999}"));
  const Command too_small = check(dir, small);
  EXPECT_EQ(too_small.status, 2);
  EXPECT_EQ(too_small.err, small + ":7:26: transport.batch_bytes: 39999 bytes cannot hold one "
                                   "tuple of stream 'bigs' (40000 bytes)\n");
}

TEST(BigTupleLimits, TheTupleBytesFlagReachesTheLimitAndNoFurther) {
  TempDir dir;
  const auto file = dir.file("flag.yaml", one_stream("[{seq: i64}, {ts: timestamp}, {pad: str8}]",
                                                     "{batch_bytes: 65503}"));
  const Command largest = check(dir, file, " --tuple-bytes 65496");
  EXPECT_EQ(largest.status, 0) << largest.err;
  EXPECT_NE(largest.out.find("seq:i64,ts:timestamp,pad:str65480"), std::string::npos)
      << largest.out;
  const Command beyond = check(dir, file, " --tuple-bytes 65504");
  EXPECT_EQ(beyond.status, 2);
  EXPECT_EQ(beyond.err, "--tuple-bytes: must be at most 65496 (the largest tuple, one frame's "
                        "payload on every medium), got 65504\n");
  // Beyond the default frame, the flag's error names the flag that fixes it.
  const auto plain =
      dir.file("plain.yaml", one_stream("[{seq: i64}, {ts: timestamp}, {pad: str8}]"));
  const Command unframed = check(dir, plain, " --tuple-bytes 40000");
  EXPECT_EQ(unframed.status, 2);
  EXPECT_EQ(unframed.err, "--tuple-bytes: batch_bytes 32768 cannot hold one tuple of stream "
                          "'bigs' (40000 bytes); give --batch-bytes 40000 or more\n");
  const Command framed = check(dir, plain, " --tuple-bytes 40000 --batch-bytes 40000");
  EXPECT_EQ(framed.status, 0) << framed.err;
}

// `boreal launch --tuple-bytes 8192`, refused while strings stopped at 4096 bytes, runs.
TEST(BigTupleLimits, LaunchWithEightKiBTuples) {
  TempDir dir;
  const auto file =
      dir.file("launch.yaml", one_stream("[{seq: i64}, {ts: timestamp}, {pad: str8}]"));
  const auto lines_path = dir.file("run.jsonl");
  const auto ran =
      run(std::string(BOREAL_BIN) + " launch " + file +
          " --timeout 60 --free-ports --quiet --tuple-bytes 8192 --json " + lines_path);
  ASSERT_EQ(ran.status, 0) << ran.text;
  const auto lines = read_json_lines(lines_path);
  ASSERT_FALSE(lines.empty());
  const json& summary = lines.back();
  EXPECT_EQ(summary["tuple_bytes"], 8192);
  EXPECT_EQ(summary["tuples_sent"], 1000);
  EXPECT_EQ(summary["tuples_received"], 1000);
  EXPECT_EQ(summary["lost"], 0);
  EXPECT_EQ(summary["duplicated"], 0);
  EXPECT_EQ(summary["checksum_ok"], true);
}

}  // namespace
