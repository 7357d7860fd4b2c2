// The receiving end of the loop study, without its wait strategy: listeners, accepting,
// reading, and checking every frame (header, CRC-32C, frame sequence) and tuple (per-link
// sequence), with the latency from each tuple's scheduled send time to its receipt. One
// thread; allocates only when a connection opens.
#pragma once

#include <netinet/in.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include <boreal/ops/latency_histogram.hpp>
#include <boreal/transport/error.hpp>
#include <boreal/transport/frame.hpp>

#include "loopstudy/conn_pool.hpp"
#include "loopstudy/study_shape.hpp"
#include "loopstudy/syscalls.hpp"

namespace boreal::runtime::loopstudy {

// Per-connection state: the socket and its input buffer; bytes [begin, end) are received
// and not yet parsed.
struct RecvConn {
  int fd = -1;
  std::vector<std::byte> in;  // sized once: kInFrames frames
  std::size_t begin = 0;
  std::size_t end = 0;
};

struct RecvLink {
  int index = 0;
  int listener = -1;
  sockaddr_in address{};  // where the listener listens (127.0.0.1, ephemeral port)
  std::unique_ptr<RecvConn> conn;
  transport::FrameLimits limits;
  std::uint64_t next_tuple = 0;
  std::uint64_t next_frame = 0;
  bool end_of_stream = false;  // its frame has arrived
  bool finished = false;       // and the connection has closed after it
};

enum class ReadStatus { data, again, eof };

class RecvCore {
 public:
  // `links`: the link numbers this end serves. `blocking`: sockets and listeners stay
  // blocking, with a kWaitSliceNs receive timeout (thread-per-link).
  RecvCore(const StudyShape& shape, const std::vector<int>& links, bool blocking, bool recycle);
  RecvCore(const RecvCore&) = delete;
  RecvCore& operator=(const RecvCore&) = delete;
  ~RecvCore();

  // Opens every link's listener on 127.0.0.1 with an ephemeral port.
  [[nodiscard]] transport::Result<void> listen();
  void end_warmup() { pool_.end_warmup(); }

  // Accepts the link's next connection; false when none is waiting (or the blocking
  // accept timed out).
  [[nodiscard]] transport::Result<bool> accept(RecvLink& link);
  // One recv into the link's buffer, then checks every complete frame.
  [[nodiscard]] transport::Result<ReadStatus> read_once(RecvLink& link);
  // read_once() until the socket has nothing more (again) or the peer closed (eof).
  [[nodiscard]] transport::Result<ReadStatus> drain(RecvLink& link);
  // After eof: closes the connection. The link is finished if end_of_stream came, else it
  // waits for the sender's next connection. An eof in the middle of a frame is an Error.
  [[nodiscard]] transport::Result<void> close_conn(RecvLink& link);
  // Closes connections and listeners (also after an error); safe to call twice.
  void close_all() noexcept;

  [[nodiscard]] bool finished() const noexcept;
  [[nodiscard]] std::vector<RecvLink>& links() noexcept { return links_; }
  [[nodiscard]] const std::vector<RecvLink>& links() const noexcept { return links_; }
  [[nodiscard]] RecvLink* link_by_index(int index) noexcept;
  [[nodiscard]] Syscalls& sys() noexcept { return sys_; }
  [[nodiscard]] const Syscalls& sys() const noexcept { return sys_; }
  [[nodiscard]] const ops::LatencyHistogram& latency() const noexcept { return latency_; }
  [[nodiscard]] std::uint64_t tuples() const noexcept { return tuples_; }
  [[nodiscard]] std::uint64_t frames() const noexcept { return frames_; }
  [[nodiscard]] std::uint64_t allocations_after_warmup() const noexcept {
    return pool_.allocations_after_warmup();
  }

 private:
  [[nodiscard]] transport::Result<void> parse(RecvLink& link);

  const StudyShape& shape_;
  bool blocking_;
  ConnPool<RecvConn> pool_;
  std::vector<RecvLink> links_;
  Syscalls sys_;
  ops::LatencyHistogram latency_;
  std::uint64_t tuples_ = 0;
  std::uint64_t frames_ = 0;
};

inline constexpr std::size_t kInFrames = 4;

}  // namespace boreal::runtime::loopstudy
