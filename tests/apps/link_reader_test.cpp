// What a link reader tells its thread's wait about arrivals (LinkReader::rate_hz(), summed in
// node.cpp's hints): the rate of its link's arrivals() (transport/link.hpp), which are frames,
// but on a shared tcp connection the connection's reads that brought data, since the frames of
// one send arrive together and wake a blocked thread once (docs/design.md, "One tcp connection
// per pair of threads"; tcp_shared_test.cpp checks the tcp link's count).
#include "runtime/link_ports.hpp"

#include <chrono>
#include <cstdint>

#include <gtest/gtest.h>

#include <boreal/transport/frame.hpp>
#include <boreal/transport/link.hpp>

#include "runtime/stream_fanout.hpp"

namespace boreal::runtime {
namespace {

// Each poll delivers `frames` empty data frames after one read that brought them, and one
// read that found nothing (as a drained socket's last read does). `shared`: its arrivals are
// those reads, as a tcp link's on a shared connection are; else its frames.
class FakeLink final : public transport::RecvLink {
 public:
  FakeLink(int frames, bool shared) : frames_(frames), shared_(shared) {}
  int poll(transport::FrameSink& sink) override {
    stats_.read_calls += 2;
    stats_.would_block += 1;
    for (int i = 0; i < frames_; ++i) {
      ++stats_.frames;
      sink.on_frame(transport::FrameView{
          transport::FrameHeader{.flags = transport::kFlagData,
                                 .stream_id = 1,
                                 .sequence = ++sequence_}, {}});
    }
    return frames_;
  }
  bool arm() override { return true; }
  transport::LinkState state() const override { return transport::LinkState::established; }
  const transport::Error* error() const override { return nullptr; }
  const transport::LinkStats& stats() const override { return stats_; }
  std::uint32_t stream_id() const override { return 1; }
  double free_capacity() const override { return 64; }
  std::uint64_t arrivals() const override {
    return shared_ ? stats_.read_calls - stats_.would_block : stats_.frames;
  }

 private:
  int frames_;
  bool shared_;
  std::uint64_t sequence_ = 0;
  transport::LinkStats stats_;
};

// A poll every 100 µs for 50 ms, each finding 64 frames from one read: 640 k frames/s,
// 10 k reads/s.
double rate_after_polls(bool shared) {
  FakeLink link(64, shared);
  StreamFanout out("s");
  LinkReader reader(LinkIdentity{"s", "src", "tcp"}, link,
                    ops::Schema::make({{"seq", "i64"}}).value(), out);
  const SteadyTime start{std::chrono::seconds(1)};
  for (int i = 0; i <= 500; ++i) (void)reader.poll(start + i * std::chrono::microseconds(100));
  EXPECT_EQ(reader.frames(), 501u * 64u);
  return reader.rate_hz();
}

TEST(LinkReaderArrivals, AreFramesOnALinkOfItsOwn) {
  EXPECT_NEAR(rate_after_polls(/*shared=*/false), 640'000.0, 640.0);
}

TEST(LinkReaderArrivals, AreReadsThatBroughtDataOnASharedConnection) {
  EXPECT_NEAR(rate_after_polls(/*shared=*/true), 10'000.0, 10.0);
}

}  // namespace
}  // namespace boreal::runtime
