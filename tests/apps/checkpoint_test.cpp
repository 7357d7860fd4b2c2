#include "runtime/checkpoint.hpp"

#include <cstdio>
#include <fstream>
#include <string>

#include <unistd.h>

#include <gtest/gtest.h>

namespace boreal::runtime {
namespace {

std::string scratch(const std::string& name) {
  return ::testing::TempDir() + "checkpoint_" + std::to_string(::getpid()) + "_" + name;
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

TEST(Checkpoint, SavesAndLoadsBackExactlyAndLeavesNoTemporaryFile) {
  const std::string path = scratch("round_trip");
  Checkpoint c;
  c.node = "dst";
  c.inputs = {{"ticks", 948}, {"quotes", 0}};
  c.sinks = {{"out", SinkState{.file_bytes = 41, .tuples = 100131, .batches = 7, .bytes = 4005240,
                               .crc = 0xDEADBEEF, .lost = 1, .duplicated = 2, .out_of_order = 3,
                               .next_seq = 100131}}};
  ASSERT_TRUE(save_checkpoint(path, c));
  EXPECT_FALSE(std::ifstream(path + ".new").good());
  auto back = load_checkpoint(path, "dst");
  ASSERT_TRUE(back) << back.error().message;
  ASSERT_TRUE(back.value().has_value());
  EXPECT_EQ(*back.value(), c);
  std::remove(path.c_str());
}

TEST(Checkpoint, AMissingFileIsAFirstRun) {
  auto none = load_checkpoint(scratch("absent"), "dst");
  ASSERT_TRUE(none);
  EXPECT_FALSE(none.value().has_value());
}

TEST(Checkpoint, AnotherNodesOrAMalformedFileIsRefusedNamingTheFile) {
  const std::string path = scratch("bad");
  write_file(path, R"({"format": 1, "node": "src", "inputs": {}, "sinks": {}})");
  auto other = load_checkpoint(path, "dst");
  ASSERT_FALSE(other);
  EXPECT_EQ(other.error().message,
            "checkpoint " + path + ": it belongs to node 'src', not 'dst'");

  write_file(path, R"({"format": 2, "node": "dst", "inputs": {}, "sinks": {}})");
  auto newer = load_checkpoint(path, "dst");
  ASSERT_FALSE(newer);
  EXPECT_EQ(newer.error().message, "checkpoint " + path + ": format 2 (this build reads 1)");

  write_file(path, "not json");
  auto garbage = load_checkpoint(path, "dst");
  ASSERT_FALSE(garbage);
  EXPECT_EQ(garbage.error().message.rfind("checkpoint " + path + ": not a checkpoint (", 0), 0u)
      << garbage.error().message;

  write_file(path, R"({"format": 1, "node": "dst", "inputs": {"ticks": "x"}, "sinks": {}})");
  auto wrong_type = load_checkpoint(path, "dst");
  ASSERT_FALSE(wrong_type);
  EXPECT_EQ(wrong_type.error().message.rfind("checkpoint " + path + ": not a checkpoint (", 0), 0u);
  std::remove(path.c_str());
}

}  // namespace
}  // namespace boreal::runtime
