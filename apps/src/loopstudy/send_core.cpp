#include "loopstudy/send_core.hpp"

#include <fcntl.h>
#include <netinet/tcp.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>
#include <span>
#include <string>

#include <boreal/transport/frame.hpp>

namespace boreal::runtime::loopstudy {
namespace {

using transport::ErrorCategory;
using transport::fail;

constexpr std::int64_t kFar = std::numeric_limits<std::int64_t>::max() / 2;
constexpr int kCloseWaitMs = 10'000;

std::string link_name(const SendLink& link) { return "link " + std::to_string(link.index); }

}  // namespace

SendCore::SendCore(const StudyShape& shape, const std::vector<int>& links,
                   const std::vector<sockaddr_in>& addresses, bool blocking, bool recycle)
    : shape_(shape),
      blocking_(blocking),
      pool_(recycle, [bytes = kOutFrames * shape.frame_max_bytes] {
        auto conn = std::make_unique<SendConn>();
        conn->out.resize(bytes);
        return conn;
      }) {
  links_.reserve(links.size());
  for (const int l : links) {
    SendLink link;
    link.index = l;
    link.address = addresses[static_cast<std::size_t>(l)];
    link.limit = shape.rate > 0 ? shape.link_tuples(l) : std::numeric_limits<std::uint64_t>::max();
    links_.push_back(std::move(link));
  }
}

SendCore::~SendCore() { close_all(); }

transport::Result<void> SendCore::connect(SendLink& link) {
  auto conn = pool_.take();
  conn->head = conn->committed = 0;
  conn->frames = 0;
  conn->fd = sys_.socket();
  if (conn->fd < 0) return os_error(link_name(link) + ": socket", errno);
  link.conn = std::move(conn);
  const int fd = link.conn->fd;
  const int one = 1;
  if (sys_.setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) != 0) {
    return os_error(link_name(link) + ": TCP_NODELAY", errno);
  }
  const auto* address = reinterpret_cast<const sockaddr*>(&link.address);
  if (sys_.connect(fd, address, sizeof link.address) != 0) {
    return os_error(link_name(link) + ": connect", errno);
  }
  if (!blocking_ && sys_.fcntl(fd, F_SETFL, O_NONBLOCK) != 0) {
    return os_error(link_name(link) + ": O_NONBLOCK", errno);
  }
  return transport::success();
}

bool SendCore::has_room(const SendConn& conn) const noexcept {
  return conn.out.size() - (conn.committed - conn.head) >= shape_.frame_max_bytes;
}

bool SendCore::make_room(SendConn& conn) const noexcept {
  if (conn.head == conn.committed) {
    conn.head = conn.committed = 0;
  } else if (conn.out.size() - conn.committed < shape_.frame_max_bytes) {
    if (!has_room(conn)) return false;
    std::memmove(conn.out.data(), conn.out.data() + conn.head, conn.committed - conn.head);
    conn.committed -= conn.head;
    conn.head = 0;
  }
  return true;
}

void SendCore::append_tuple(SendLink& link, std::int64_t stamp_ns) noexcept {
  std::byte* at = link.conn->out.data() + link.conn->committed + transport::kFrameHeaderBytes +
                  std::size_t{link.building} * shape_.tuple_bytes;
  // Tuple layout: [0, 8) per-link sequence, [8, 16) scheduled send time (ns), then filler.
  std::memcpy(at, &link.next, sizeof link.next);
  std::memcpy(at + 8, &stamp_ns, sizeof stamp_ns);
  if (link.building == 0) link.oldest_ns = stamp_ns;
  ++link.building;
  ++link.next;
}

void SendCore::seal(SendLink& link, bool end_of_stream) noexcept {
  SendConn& conn = *link.conn;
  const std::uint32_t payload_bytes = link.building * shape_.tuple_bytes;
  transport::FrameHeader header;
  header.flags = static_cast<std::uint16_t>(transport::kFlagData |
                                            (end_of_stream ? transport::kFlagEndOfStream : 0));
  header.stream_id = static_cast<std::uint32_t>(link.index + 1);
  header.tuple_count = link.building;
  header.sequence = link.frame_sequence++;
  header.payload_bytes = payload_bytes;
  std::byte* at = conn.out.data() + conn.committed;
  transport::encode_header(
      header, std::span<const std::byte>(at + transport::kFrameHeaderBytes, payload_bytes),
      std::span<std::byte, transport::kFrameHeaderBytes>(at, transport::kFrameHeaderBytes));
  conn.committed += transport::kFrameHeaderBytes + payload_bytes;
  link.building = 0;
  ++conn.frames;
  if (end_of_stream) {
    link.eos_sealed = true;
  } else if (shape_.reconnect_every != 0 && conn.frames >= shape_.reconnect_every) {
    link.reconnect_due = true;
  }
}

void SendCore::produce(std::int64_t now) {
  const bool paced = shape_.rate > 0;
  if (!paced && now >= shape_.end_ns) {
    for (auto& link : links_) link.limit = std::min(link.limit, link.next);
  }
  for (auto& link : links_) {
    if (link.closed || link.eos_sealed || link.reconnect_due || !link.conn) continue;
    for (;;) {
      if (link.building == 0 && !make_room(*link.conn)) break;  // waits for sends
      while (link.building < shape_.tuples_per_frame && link.next < link.limit) {
        std::int64_t stamp = now;
        if (paced) {
          stamp = shape_.due_ns(global_index(link, link.next));
          if (stamp > now) break;
        }
        append_tuple(link, stamp);
      }
      const bool last = link.next >= link.limit;
      const bool full = link.building == shape_.tuples_per_frame;
      const bool old = link.building > 0 && now - link.oldest_ns >= shape_.flush_ns;
      if (!(last || full || old)) break;
      seal(link, last);
      if (link.eos_sealed || link.reconnect_due) break;
    }
  }
}

std::int64_t SendCore::next_deadline(std::int64_t now) const {
  std::int64_t deadline = kFar;
  for (const auto& link : links_) {
    if (link.closed || link.eos_sealed || link.reconnect_due || !link.conn) continue;
    if (shape_.rate <= 0) {
      // Unpaced: more to do as soon as there is room; the end of the run ends generation.
      deadline = std::min(deadline, shape_.end_ns);
      if (link.building > 0 || has_room(*link.conn)) return now;
      continue;
    }
    if (link.building == 0 && !has_room(*link.conn)) continue;
    if (link.next >= link.limit) return now;
    // Sealed when the oldest tuple is flush old or the frame fills, whichever comes first.
    const std::int64_t oldest =
        link.building > 0 ? link.oldest_ns : shape_.due_ns(global_index(link, link.next));
    const std::uint64_t filling =
        std::min(link.next + (shape_.tuples_per_frame - link.building) - 1, link.limit - 1);
    deadline = std::min(
        {deadline, oldest + shape_.flush_ns, shape_.due_ns(global_index(link, filling))});
  }
  return deadline;
}

transport::Result<WriteStatus> SendCore::write_once(SendLink& link) {
  SendConn& conn = *link.conn;
  for (;;) {
    const ssize_t n =
        sys_.send(conn.fd, std::span<const std::byte>(conn.out.data() + conn.head,
                                                      conn.committed - conn.head));
    ++link.sends;
    if (n >= 0) {
      conn.head += static_cast<std::size_t>(n);
      return conn.head == conn.committed ? WriteStatus::done : WriteStatus::partial;
    }
    if (errno == EAGAIN || errno == EWOULDBLOCK) return WriteStatus::blocked;
    if (errno != EINTR) return os_error(link_name(link) + ": send", errno);
  }
}

transport::Result<WriteStatus> SendCore::write_all(SendLink& link) {
  for (;;) {
    auto status = write_once(link);
    if (!status || status.value() != WriteStatus::partial) return status;
  }
}

transport::Result<void> SendCore::reconnect(SendLink& link) {
  const int fd = link.conn->fd;
  if (sys_.shutdown_write(fd) != 0) return os_error(link_name(link) + ": shutdown", errno);
  // The receiver closes once it has read everything; only then may the next connection
  // start, so that a link's frames never arrive on two connections at once.
  const int ready = sys_.poll_in(fd, kCloseWaitMs);
  if (ready < 0) return os_error(link_name(link) + ": poll", errno);
  if (ready == 0) {
    return fail(ErrorCategory::closed, 0,
                link_name(link) + ": the receiver did not close the connection within 10 s");
  }
  std::byte sink[1];
  if (sys_.recv(fd, sink) != 0) {
    return fail(ErrorCategory::protocol, 0,
                link_name(link) + ": the receiver sent data or failed instead of closing");
  }
  sys_.close(fd);
  link.conn->fd = -1;
  pool_.give(std::move(link.conn));
  link.reconnect_due = false;
  return connect(link);
}

transport::Result<void> SendCore::close(SendLink& link) {
  const int fd = link.conn->fd;
  link.closed = true;
  const int rc = sys_.shutdown_write(fd);
  const int error_number = errno;
  sys_.close(fd);
  link.conn->fd = -1;
  pool_.give(std::move(link.conn));
  if (rc != 0) return os_error(link_name(link) + ": shutdown", error_number);
  return transport::success();
}

void SendCore::close_all() noexcept {
  for (auto& link : links_) {
    if (link.conn && link.conn->fd >= 0) {
      sys_.close(link.conn->fd);
      link.conn->fd = -1;
    }
  }
}

bool SendCore::finished() const noexcept {
  return std::all_of(links_.begin(), links_.end(), [](const SendLink& l) { return l.closed; });
}

}  // namespace boreal::runtime::loopstudy
