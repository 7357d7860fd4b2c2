// The sending end of the loop study, without its wait strategy: paces tuples onto links,
// packs them into frames in place (in the connection's output buffer), writes, reconnects
// and closes. The strategy decides when to call write_*() and how to wait for
// writability (drivers.hpp). One thread; allocates only when a connection opens.
#pragma once

#include <netinet/in.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include <boreal/transport/error.hpp>

#include "loopstudy/conn_pool.hpp"
#include "loopstudy/study_shape.hpp"
#include "loopstudy/syscalls.hpp"

namespace boreal::runtime::loopstudy {

// Per-connection state: the socket and its output buffer. Bytes [head, committed) are
// sealed frames waiting to be sent; the frame being built starts at `committed`.
struct SendConn {
  int fd = -1;
  std::vector<std::byte> out;  // sized once: kOutFrames frames
  std::size_t head = 0;
  std::size_t committed = 0;
  std::uint32_t frames = 0;  // sealed on this connection
};

struct SendLink {
  int index = 0;                // link number; its frames carry stream id index + 1
  sockaddr_in address{};        // the receiver's listener for this link
  std::unique_ptr<SendConn> conn;
  std::uint64_t next = 0;       // per-link sequence of the next tuple to generate
  std::uint64_t limit = 0;      // tuples this link sends (all of them while rate 0 runs)
  std::uint64_t frame_sequence = 0;
  std::uint32_t building = 0;   // tuples in the frame being built
  std::int64_t oldest_ns = 0;   // stamp of its first tuple
  bool reconnect_due = false;   // reconnect_every frames sealed: reconnect once sent
  bool eos_sealed = false;
  bool closed = false;
  // Wait-strategy state, owned by the strategy.
  bool blocked = false;  // a send returned EAGAIN; waiting for writability
  bool armed = false;    // EPOLLOUT interest registered
  int idle_wakeups = 0;  // epoll-lazy: loop iterations without anything to send
  std::uint64_t sends = 0;
};

enum class WriteStatus { done, partial, blocked };

class SendCore {
 public:
  // `links`: the link numbers this end serves (all, or one for thread-per-link).
  // `blocking`: sockets stay in blocking mode (thread-per-link).
  SendCore(const StudyShape& shape, const std::vector<int>& links,
           const std::vector<sockaddr_in>& addresses, bool blocking, bool recycle);
  SendCore(const SendCore&) = delete;
  SendCore& operator=(const SendCore&) = delete;
  ~SendCore();

  // Opens the link's connection (socket, TCP_NODELAY, connect, non-blocking mode).
  [[nodiscard]] transport::Result<void> connect(SendLink& link);
  void end_warmup() { pool_.end_warmup(); }

  // Generates the tuples due by `now` and seals the frames that are full, old enough or
  // the last one. Never blocks.
  void produce(std::int64_t now);
  // When produce() next has something to seal (absolute ns); `now` when it has work now;
  // a far-away time when every link waits for writes.
  [[nodiscard]] std::int64_t next_deadline(std::int64_t now) const;

  // One send of the link's sealed bytes.
  [[nodiscard]] transport::Result<WriteStatus> write_once(SendLink& link);
  // Sends until nothing is sealed or the socket would block.
  [[nodiscard]] transport::Result<WriteStatus> write_all(SendLink& link);

  [[nodiscard]] static bool has_pending(const SendLink& link) noexcept {
    return link.conn && link.conn->committed > link.conn->head;
  }
  [[nodiscard]] static bool wants_reconnect(const SendLink& link) noexcept {
    return link.reconnect_due && !has_pending(link);
  }
  [[nodiscard]] static bool wants_close(const SendLink& link) noexcept {
    return link.eos_sealed && !link.closed && !has_pending(link);
  }
  // Ends the connection (shutdown, then waits up to 10 s for the receiver's close) and
  // opens the next one. The strategy forgets the old fd before and watches the new one
  // after.
  [[nodiscard]] transport::Result<void> reconnect(SendLink& link);
  // After end_of_stream: shuts the write side down and closes.
  [[nodiscard]] transport::Result<void> close(SendLink& link);
  // Closes whatever is still open (after an error); safe to call twice.
  void close_all() noexcept;

  [[nodiscard]] bool finished() const noexcept;
  [[nodiscard]] std::vector<SendLink>& links() noexcept { return links_; }
  [[nodiscard]] const std::vector<SendLink>& links() const noexcept { return links_; }
  // Whether some link has a write that would block (its poller must wait for writability).
  [[nodiscard]] bool any_blocked() const noexcept {
    return std::any_of(links_.begin(), links_.end(), [](const SendLink& l) { return l.blocked; });
  }
  [[nodiscard]] Syscalls& sys() noexcept { return sys_; }
  [[nodiscard]] const Syscalls& sys() const noexcept { return sys_; }
  [[nodiscard]] std::uint64_t allocations_after_warmup() const noexcept {
    return pool_.allocations_after_warmup();
  }

 private:
  [[nodiscard]] bool make_room(SendConn& conn) const noexcept;
  [[nodiscard]] bool has_room(const SendConn& conn) const noexcept;
  void append_tuple(SendLink& link, std::int64_t stamp_ns) noexcept;
  void seal(SendLink& link, bool end_of_stream) noexcept;
  [[nodiscard]] std::uint64_t global_index(const SendLink& link, std::uint64_t k) const noexcept {
    return static_cast<std::uint64_t>(link.index) + k * static_cast<std::uint64_t>(shape_.links);
  }

  const StudyShape& shape_;
  bool blocking_;
  ConnPool<SendConn> pool_;
  std::vector<SendLink> links_;
  Syscalls sys_;
};

// Output buffer: this many frames of frame_max_bytes, so a few sealed frames can wait
// while the next is built.
inline constexpr std::size_t kOutFrames = 4;

}  // namespace boreal::runtime::loopstudy
