#include "loopstudy/recv_core.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <sys/time.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <span>
#include <string>

namespace boreal::runtime::loopstudy {
namespace {

using transport::ErrorCategory;
using transport::fail;

std::string link_name(const RecvLink& link) { return "link " + std::to_string(link.index); }

constexpr int kBacklog = 8;

}  // namespace

RecvCore::RecvCore(const StudyShape& shape, const std::vector<int>& links, bool blocking,
                   bool recycle)
    : shape_(shape),
      blocking_(blocking),
      pool_(recycle, [bytes = kInFrames * shape.frame_max_bytes] {
        auto conn = std::make_unique<RecvConn>();
        conn->in.resize(bytes);
        return conn;
      }) {
  links_.reserve(links.size());
  for (const int l : links) {
    RecvLink link;
    link.index = l;
    link.limits.stream_id = static_cast<std::uint32_t>(l + 1);
    link.limits.tuple_bytes = shape.tuple_bytes;
    link.limits.max_payload_bytes =
        shape.frame_max_bytes - std::uint32_t{transport::kFrameHeaderBytes};
    links_.push_back(std::move(link));
  }
}

RecvCore::~RecvCore() { close_all(); }

transport::Result<void> RecvCore::listen() {
  const timeval slice{0, static_cast<suseconds_t>(kWaitSliceNs / 1000)};
  for (auto& link : links_) {
    link.listener = sys_.socket();
    if (link.listener < 0) return os_error(link_name(link) + ": socket", errno);
    link.address.sin_family = AF_INET;
    link.address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    link.address.sin_port = 0;
    if (sys_.bind(link.listener, link.address) != 0) {
      return os_error(link_name(link) + ": bind", errno);
    }
    if (sys_.listen(link.listener, kBacklog) != 0) {
      return os_error(link_name(link) + ": listen", errno);
    }
    if (sys_.getsockname(link.listener, link.address) != 0) {
      return os_error(link_name(link) + ": getsockname", errno);
    }
    const int rc =
        blocking_ ? sys_.setsockopt(link.listener, SOL_SOCKET, SO_RCVTIMEO, &slice, sizeof slice)
                  : sys_.fcntl(link.listener, F_SETFL, O_NONBLOCK);
    if (rc != 0) return os_error(link_name(link) + ": listener mode", errno);
  }
  return transport::success();
}

transport::Result<bool> RecvCore::accept(RecvLink& link) {
  if (link.conn) {
    return fail(ErrorCategory::protocol, 0,
                link_name(link) + ": a second connection while the first is open");
  }
  const int fd = sys_.accept(link.listener, blocking_ ? 0 : SOCK_NONBLOCK);
  if (fd < 0) {
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return false;
    return os_error(link_name(link) + ": accept", errno);
  }
  if (blocking_) {
    const timeval slice{0, static_cast<suseconds_t>(kWaitSliceNs / 1000)};
    if (sys_.setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &slice, sizeof slice) != 0) {
      const int error_number = errno;
      sys_.close(fd);
      return os_error(link_name(link) + ": SO_RCVTIMEO", error_number);
    }
  }
  link.conn = pool_.take();
  link.conn->fd = fd;
  link.conn->begin = link.conn->end = 0;
  return true;
}

transport::Result<ReadStatus> RecvCore::read_once(RecvLink& link) {
  RecvConn& conn = *link.conn;
  const ssize_t n =
      sys_.recv(conn.fd, std::span<std::byte>(conn.in.data() + conn.end,
                                              conn.in.size() - conn.end));
  if (n == 0) return ReadStatus::eof;
  if (n < 0) {
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return ReadStatus::again;
    return os_error(link_name(link) + ": recv", errno);
  }
  conn.end += static_cast<std::size_t>(n);
  if (auto parsed = parse(link); !parsed) return parsed.error();
  return ReadStatus::data;
}

transport::Result<ReadStatus> RecvCore::drain(RecvLink& link) {
  for (;;) {
    auto status = read_once(link);
    if (!status || status.value() != ReadStatus::data) return status;
  }
}

transport::Result<void> RecvCore::parse(RecvLink& link) {
  RecvConn& conn = *link.conn;
  const std::int64_t now = now_ns();
  while (conn.end - conn.begin >= transport::kFrameHeaderBytes) {
    const std::byte* at = conn.in.data() + conn.begin;
    const std::span<const std::byte, transport::kFrameHeaderBytes> raw(
        at, transport::kFrameHeaderBytes);
    auto header = transport::decode_header(raw, link.limits);
    if (!header) {
      return fail(header.error().category, 0,
                  link_name(link) + ", frame " + std::to_string(link.next_frame) + ": " +
                      header.error().message);
    }
    const auto& h = header.value();
    const std::size_t size = transport::kFrameHeaderBytes + h.payload_bytes;
    if (conn.end - conn.begin < size) break;
    const std::span<const std::byte> payload(at + transport::kFrameHeaderBytes, h.payload_bytes);
    if (auto ok = transport::verify_checksum(h, raw, payload); !ok) {
      return fail(ErrorCategory::protocol, 0,
                  link_name(link) + ", frame " + std::to_string(h.sequence) + ": " +
                      ok.error().message);
    }
    if (link.end_of_stream) {
      return fail(ErrorCategory::protocol, 0, link_name(link) + ": frame after end_of_stream");
    }
    if (h.sequence != link.next_frame) {
      return fail(ErrorCategory::protocol, 0,
                  link_name(link) + ": frame " + std::to_string(h.sequence) + " where " +
                      std::to_string(link.next_frame) + " was due (frames lost or reordered)");
    }
    for (std::uint32_t i = 0; i < h.tuple_count; ++i) {
      const std::byte* tuple = payload.data() + std::size_t{i} * shape_.tuple_bytes;
      std::uint64_t sequence = 0;
      std::int64_t stamp = 0;
      std::memcpy(&sequence, tuple, sizeof sequence);
      std::memcpy(&stamp, tuple + 8, sizeof stamp);
      if (sequence != link.next_tuple) {
        return fail(ErrorCategory::protocol, 0,
                    link_name(link) + ": tuple " + std::to_string(sequence) + " where " +
                        std::to_string(link.next_tuple) + " was due (tuples lost or reordered)");
      }
      ++link.next_tuple;
      latency_.record(now - stamp);
    }
    tuples_ += h.tuple_count;
    ++frames_;
    ++link.next_frame;
    if ((h.flags & transport::kFlagEndOfStream) != 0) link.end_of_stream = true;
    conn.begin += size;
  }
  // Keep room for a whole frame after `end`: the partial frame moves to the front.
  if (conn.begin == conn.end) {
    conn.begin = conn.end = 0;
  } else if (conn.in.size() - conn.end < shape_.frame_max_bytes) {
    std::memmove(conn.in.data(), conn.in.data() + conn.begin, conn.end - conn.begin);
    conn.end -= conn.begin;
    conn.begin = 0;
  }
  return transport::success();
}

transport::Result<void> RecvCore::close_conn(RecvLink& link) {
  const bool partial = link.conn->end != link.conn->begin;
  sys_.close(link.conn->fd);
  link.conn->fd = -1;
  pool_.give(std::move(link.conn));
  if (partial) {
    return fail(ErrorCategory::protocol, 0,
                link_name(link) + ": connection closed in the middle of frame " +
                    std::to_string(link.next_frame));
  }
  if (link.end_of_stream) link.finished = true;
  return transport::success();
}

void RecvCore::close_all() noexcept {
  for (auto& link : links_) {
    if (link.conn && link.conn->fd >= 0) {
      sys_.close(link.conn->fd);
      link.conn->fd = -1;
    }
    if (link.listener >= 0) {
      sys_.close(link.listener);
      link.listener = -1;
    }
  }
}

bool RecvCore::finished() const noexcept {
  return std::all_of(links_.begin(), links_.end(), [](const RecvLink& l) { return l.finished; });
}

RecvLink* RecvCore::link_by_index(int index) noexcept {
  for (auto& link : links_) {
    if (link.index == index) return &link;
  }
  return nullptr;
}

}  // namespace boreal::runtime::loopstudy
