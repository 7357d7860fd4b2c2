// How a node sizes rxm's bounce buffers before libfabric loads (runtime/media.hpp,
// size_rxm_bounce_buffers): the sum of a receiving thread's rxm links' windows plus 64, at
// least 128, set in FI_OFI_RXM_MSG_RX_SIZE only where the node has a fabric link over rxm and
// the variable is not set already.
#include <cstdlib>
#include <string>

#include <gtest/gtest.h>

#include "runtime/media.hpp"
#include "spec/network_spec.hpp"

namespace {

using namespace boreal::runtime;

constexpr const char* kVariable = "FI_OFI_RXM_MSG_RX_SIZE";

// src sends three streams to dst: `a` and `b` into dst's thread 0, `c` into its thread 1; the
// medium and window of each come from `links` (one YAML list item per stream).
std::string network(const std::string& transport, const std::string& links) {
  return "name: rxm\n"
         "schemas:\n"
         "  tick: [{seq: i64}, {ts: timestamp}]\n"
         "nodes:\n"
         "  - {name: src, address: \"tcp://127.0.0.1:7101\"}\n"
         "  - {name: dst, address: \"tcp://127.0.0.1:7102\", threads: 2}\n"
         "  - {name: idle, address: \"tcp://127.0.0.1:7103\"}\n"
         "transport: " + transport + "\n"
         "boxes:\n"
         "  - {name: ga, type: source, node: src, out: a, schema: tick, params: {tuples: 10}}\n"
         "  - {name: gb, type: source, node: src, out: b, schema: tick, params: {tuples: 10}}\n"
         "  - {name: gc, type: source, node: src, out: c, schema: tick, params: {tuples: 10}}\n"
         "  - {name: gi, type: source, node: idle, out: i, schema: tick, params: {tuples: 10}}\n"
         "  - {name: sa, type: sink, node: dst, thread: 0, in: a, params: {kind: count}}\n"
         "  - {name: sb, type: sink, node: dst, thread: 0, in: b, params: {kind: count}}\n"
         "  - {name: sc, type: sink, node: dst, thread: 1, in: c, params: {kind: count}}\n"
         "  - {name: si, type: sink, node: idle, in: i, params: {kind: count}}\n" +
         (links.empty() ? std::string() : "links:\n" + links);
}

class RxmSizing : public ::testing::Test {
 protected:
  void SetUp() override {
    if (const char* set = std::getenv(kVariable)) saved_ = set;
    ASSERT_EQ(::unsetenv(kVariable), 0);
  }
  void TearDown() override {
    if (saved_.empty()) {
      ::unsetenv(kVariable);
    } else {
      ::setenv(kVariable, saved_.c_str(), 1);
    }
  }

  // The value size_rxm_bounce_buffers() returns for `node` of `text`, and what the variable
  // holds afterwards ("-" when unset); unsets it again.
  std::pair<std::string, std::string> sized(const std::string& text, const std::string& node) {
    auto spec = parse_network(text, "rxm.yaml");
    EXPECT_TRUE(spec) << spec.error().joined();
    if (!spec) return {};
    const NodeSpec* self = spec.value().find_node(node);
    EXPECT_NE(self, nullptr);
    if (self == nullptr) return {};
    std::string returned = size_rxm_bounce_buffers(spec.value(), *self);
    const char* now = std::getenv(kVariable);
    std::string held = now ? now : "-";
    ::unsetenv(kVariable);
    return {returned, held};
  }

 private:
  std::string saved_;
};

TEST_F(RxmSizing, AReceivingThreadGetsItsLinksWindowsPlusRoomAndASenderTheSmallest) {
  const auto text = network("{medium: fabric-msg, window: 64}",
                            "  - {stream: a, window: 1024}\n"
                            "  - {stream: b, medium: fabric-rma, window: 200}\n"
                            "  - {stream: c, window: 2048}\n");
  // dst: thread 0 receives a and b (1024 + 200), thread 1 c (2048): the larger, plus 64.
  EXPECT_EQ(sized(text, "dst"), std::make_pair(std::string("2112"), std::string("2112")));
  // src only sends: rxm's size without a shared receive context.
  EXPECT_EQ(sized(text, "src"), std::make_pair(std::string("128"), std::string("128")));
  // idle's stream stays inside it: no link, nothing set.
  EXPECT_EQ(sized(text, "idle"), std::make_pair(std::string(), std::string("-")));
}

TEST_F(RxmSizing, SmallWindowsStillGetRxmsOwnSize) {
  const auto text = network("{medium: fabric-rma, window: 8}", "");
  // dst's thread 0: 8 + 8 + 64 = 80, below 128.
  EXPECT_EQ(sized(text, "dst"), std::make_pair(std::string("128"), std::string("128")));
}

TEST_F(RxmSizing, NothingIsSetWithoutRxmOrWhenTheVariableIsSet) {
  EXPECT_EQ(sized(network("{medium: tcp}", ""), "dst"),
            std::make_pair(std::string(), std::string("-")));
  EXPECT_EQ(sized(network("{medium: fabric-msg, provider: sockets}", ""), "dst"),
            std::make_pair(std::string(), std::string("-")));
  ASSERT_EQ(::setenv(kVariable, "512", 1), 0);
  EXPECT_EQ(sized(network("{medium: fabric-msg}", ""), "dst"),
            std::make_pair(std::string(), std::string("512")));
}

}  // namespace
