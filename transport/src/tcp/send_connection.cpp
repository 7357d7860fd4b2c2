// The socket of one or several sending tcp links (tcp_send_link.hpp).
#include <algorithm>
#include <array>
#include <cstring>

#include <boost/asio/connect.hpp>
#include <boost/asio/write.hpp>
#include <boost/endian/conversion.hpp>

#include "tcp/socket_io.hpp"
#include "tcp/tcp_send_link.hpp"

namespace boreal::transport::tcp_medium {

namespace asio = boost::asio;
using asio::ip::tcp;

namespace {

// Frames gathered into one send. 64 × 32 KiB frames is 2 MiB, more than a loopback socket
// buffer takes at once; 64 small frames amortise the syscall over many tuples.
constexpr std::size_t kMaxGather = 64;
// Sends of one shared connection in one pass, at most (do_work()).
constexpr int kMaxSendsPerPass = 16;
// A refused connect is retried this often until the connect timeout.
constexpr std::chrono::milliseconds kConnectRetry{20};
// Reconnecting after a lost connection: the first retry after kReconnectFirst, doubling up to
// kReconnectMost between attempts.
constexpr std::chrono::milliseconds kReconnectFirst{10};
constexpr std::chrono::milliseconds kReconnectMost{500};

constexpr std::size_t kHelloBytes = kFrameHeaderBytes + kHelloPayloadBytes;

}  // namespace

SendConnection::SendConnection(EventLoop& loop, Endpoints peers, std::string peer_text,
                               std::chrono::milliseconds connect_timeout, bool shared)
    : loop_(loop),
      socket_(loop.context()),
      retry_timer_(loop.context()),
      peers_(std::move(peers)),
      peer_text_(std::move(peer_text)),
      shared_(shared),
      connect_timeout_(connect_timeout),
      connect_deadline_(std::chrono::steady_clock::now() + connect_timeout) {
  // The loop keeps its sources, and the io_context its handlers, after this connection is
  // gone: both check `alive` before touching it.
  loop_.add_source([this, alive = alive_] { return !*alive || arm(); });
  start_connect();
}

SendConnection::~SendConnection() {
  *alive_ = false;
  retry_timer_.cancel();
  close_socket();
}

void SendConnection::join(TcpSendLink& link) {
  members_.push_back(&link);
  if (ready_) {
    // An open shared connection: the hello goes ahead of any frame of the next send.
    const auto at = hellos_.size();
    hellos_.resize(at + kHelloBytes);
    link.hello(std::span<std::byte, kHelloBytes>(hellos_.data() + at, kHelloBytes), shared_);
    link.on_hello_sent();
  } else if (!connecting_) {
    // Every earlier member gave up: try again for this one.
    connect_deadline_ = std::chrono::steady_clock::now() + connect_timeout_;
    start_connect();
  }
}

void SendConnection::leave(TcpSendLink& link) {
  std::erase(members_, &link);
  next_first_ = 0;
  if (partial_ == &link) {
    // Its frame is cut short on the wire: nothing else can follow it on this connection.
    partial_ = nullptr;
    lost({}, "a link on the connection was closed in the middle of its frame",
         /*reading=*/false);
  }
  if (members_.empty()) {
    retry_timer_.cancel();
    close_socket();
  }
}

int SendConnection::do_work() {
  if (!ready_) return 0;
  // Shared: once per pass, so that what every member committed in the pass leaves together.
  if (shared_) {
    if (loop_.passes() == pass_done_) return 0;
    pass_done_ = loop_.passes();
  }
  // What the credit in hand covers goes out before the control frames are read: reading
  // first put a recv() between every committed frame and its send (docs/design.md, "Where
  // the latency goes"). Credit that comes with them sends the rest.
  int work = write_frames();
  // No control frame has arrived since the read wait was armed on an empty socket, as of
  // this pass's start (read_wait.hpp).
  const bool nothing_to_read = read_wait_.skip_read();
  if (ready_ && !nothing_to_read) read_wait_.arm_before_read(socket_);
  if (ready_ && !nothing_to_read) work += read_control();
  // More than one send's worth (a share of kMaxGather buffers each) committed: send on while
  // the socket takes all it is given, so the windows do not fill at high rates only because
  // a pass sent a frame of each member.
  bool took_all = true;
  for (int send = 0; send < kMaxSendsPerPass && ready_ && !write_blocked_ && took_all; ++send) {
    const int sent = write_frames(&took_all);
    if (sent == 0) break;
    work += sent;
  }
  if (shared_) {
    unsent_frames_ = 0;
    for (const TcpSendLink* member : members_) unsent_frames_ += member->unsent_frames();
  }
  return work;
}

bool SendConnection::arm() {
  if (!ready_) return true;  // the connect handler notifies the loop
  bool can_write = hellos_written_ < hellos_.size() || partial_ != nullptr;
  for (const TcpSendLink* member : members_) can_write = can_write || member->can_write();
  if (can_write && !write_blocked_) return false;
  // As the receiving end's arm(): a pending wait on a socket seen empty needs no question.
  const bool asked_already = read_wait_.quiet();
  read_wait_.arm(socket_);
  if (write_blocked_ && can_write && !write_wait_pending_) {
    write_wait_pending_ = true;
    socket_.async_wait(tcp::socket::wait_write,
                       with_memory(write_wait_memory_,
                                   [this, alive = alive_](const boost::system::error_code&) {
                                     if (!*alive) return;
                                     write_wait_pending_ = false;
                                     write_blocked_ = false;
                                     loop_.notify();
                                   }));
  }
  if (asked_already) return true;
  boost::system::error_code ec;
  const bool empty = socket_.available(ec) == 0 && !ec;
  read_wait_.saw(empty);
  return empty;
}

void SendConnection::start_connect() {
  connecting_ = true;
  asio::async_connect(socket_, peers_,
                      [this, alive = alive_](const boost::system::error_code& ec,
                                             const tcp::endpoint&) {
                        if (!*alive) return;
                        loop_.notify();
                        if (!ec) return on_connected();
                        on_connect_failed(ec);
                      });
}

// Tries to connect again after `delay`, or at `deadline` for one last attempt.
void SendConnection::retry_after(std::chrono::milliseconds delay,
                                 std::chrono::steady_clock::time_point deadline) {
  const auto now = std::chrono::steady_clock::now();
  retry_timer_.expires_after(std::min<std::chrono::steady_clock::duration>(delay, deadline - now));
  retry_timer_.async_wait([this, alive = alive_](const boost::system::error_code& timer_ec) {
    if (*alive && !timer_ec) start_connect();
  });
}

std::chrono::milliseconds SendConnection::next_backoff() {
  const auto delay = backoff_;
  backoff_ = std::min(backoff_ * 2, kReconnectMost);
  return delay;
}

void SendConnection::on_connect_failed(const boost::system::error_code& ec) {
  const auto now = std::chrono::steady_clock::now();
  close_socket();
  if (reconnecting_) {
    auto deadline = std::chrono::steady_clock::time_point::min();
    for (TcpSendLink* member : members_) {
      if (!member->reconnecting()) continue;
      if (now >= member->reconnect_deadline()) {
        member->give_up_reconnecting(ec.message());
      } else {
        deadline = std::max(deadline, member->reconnect_deadline());
      }
    }
    if (!any_waiting()) {
      connecting_ = reconnecting_ = false;
      return;
    }
    return retry_after(next_backoff(), deadline);
  }
  if (now >= connect_deadline_) {
    for (TcpSendLink* member : members_) {
      member->cannot_connect(ec.value(), "cannot connect within " +
                                             std::to_string(connect_timeout_.count()) +
                                             " ms: " + ec.message());
    }
    connecting_ = false;
    return;
  }
  retry_after(kConnectRetry, connect_deadline_);
}

void SendConnection::on_connected() {
  connecting_ = false;
  if (auto ok = configure(socket_, "connection to " + peer_text_); !ok) {
    return lost({}, ok.error().message, /*reading=*/false);
  }
  // The hellos are the first thing on the wire; a fresh socket's buffer takes them all.
  std::vector<std::byte> hellos;
  std::vector<TcpSendLink*> greeted;
  for (TcpSendLink* member : members_) {
    if (!member->active()) continue;
    const auto at = hellos.size();
    hellos.resize(at + kHelloBytes);
    member->hello(std::span<std::byte, kHelloBytes>(hellos.data() + at, kHelloBytes), shared_);
    greeted.push_back(member);
  }
  boost::system::error_code ec;
  const auto written = asio::write(socket_, asio::buffer(hellos), ec);
  if (TcpSendLink* counted = accountant()) ++counted->counted_stats().write_calls;
  if (ec || written != hellos.size()) {
    return lost(ec, "cannot send hello: " + ec.message(), /*reading=*/false);
  }
  for (TcpSendLink* member : greeted) member->on_hello_sent();
  ready_ = true;
  reconnecting_ = false;
  write_blocked_ = false;
  partial_ = nullptr;
  hellos_.clear();
  hellos_written_ = 0;
  control_end_ = 0;
  read_wait_.new_connection();
}

int SendConnection::read_control() {
  int work = 0;
  for (;;) {
    boost::system::error_code ec;
    const std::size_t room = control_in_.size() - control_end_;
    const auto n = socket_.read_some(asio::buffer(control_in_.data() + control_end_, room), ec);
    TcpSendLink* counted = accountant();
    if (counted != nullptr) ++counted->counted_stats().read_calls;
    if (ec == asio::error::would_block) {
      if (counted != nullptr) ++counted->counted_stats().would_block;
      read_wait_.saw(true);
      break;
    }
    if (ec) {
      lost(ec, "connection lost: " + ec.message(), /*reading=*/true);
      return work;
    }
    control_end_ += n;
    std::size_t at = 0;
    while (control_end_ - at >= kFrameHeaderBytes) {
      const auto raw =
          std::span<const std::byte, kFrameHeaderBytes>(control_in_.data() + at,
                                                        kFrameHeaderBytes);
      at += kFrameHeaderBytes;
      ++work;
      // Offset 8: the stream id (frame.cpp's kStreamIdAt); the member checks the rest.
      std::uint32_t stream = 0;
      std::memcpy(&stream, raw.data() + 8, sizeof stream);
      TcpSendLink* member = shared_ ? member_of(boost::endian::little_to_native(stream))
                                    : (members_.empty() ? nullptr : members_.front());
      if (member == nullptr) {
        lost({}, "the receiver sent a control frame for stream " +
                     std::to_string(boost::endian::little_to_native(stream)) +
                     ", which no link on this connection carries",
             /*reading=*/false);
        return work;
      }
      if (member->state() == LinkState::failed) continue;  // nothing more for it
      if (!member->handle_control(raw) && !shared_) {
        // The one link failed: so is its connection.
        close_socket();
        ready_ = false;
        return work;
      }
    }
    std::memmove(control_in_.data(), control_in_.data() + at, control_end_ - at);
    control_end_ -= at;
    if (read_wait_.read_returned(n, room)) break;
  }
  return work;
}

int SendConnection::write_frames(bool* took_all) {
  if (took_all != nullptr) *took_all = false;
  if (!ready_) return 0;
  if (partial_ != nullptr && !partial_->active()) {
    // Failed with its frame cut short on the wire: nothing else can follow it.
    partial_ = nullptr;
    lost({}, "a link on the connection failed in the middle of its frame", /*reading=*/false);
    return 0;
  }
  // What one send carries, in order: the rest of a frame cut short by the last send, the
  // hellos of links that joined, then the members' frames, a different member first each
  // time. `parts` says whose bytes each run of buffers is.
  struct Part {
    TcpSendLink* member = nullptr;  // nullptr: the hellos
    std::size_t bytes = 0;
  };
  std::array<asio::const_buffer, kMaxGather> gather;
  std::array<Part, kMaxGather> parts;
  std::size_t count = 0;
  std::size_t part_count = 0;
  // Each member's share of one send, so that a link with a window of frames queued does not
  // hold the others back a send at a time: with many members, a frame of each.
  const std::size_t share = std::max<std::size_t>(1, kMaxGather / std::max<std::size_t>(
                                                                      1, members_.size()));
  const auto add_member = [&](TcpSendLink* member) {
    const std::size_t room = std::min(share, kMaxGather - count);
    const std::size_t got = member->gather(std::span(gather).subspan(count, room));
    if (got == 0) return;
    std::size_t bytes = 0;
    for (std::size_t i = count; i < count + got; ++i) bytes += gather[i].size();
    parts[part_count++] = Part{member, bytes};
    count += got;
  };
  if (partial_ != nullptr) add_member(partial_);
  if (hellos_written_ < hellos_.size() && count < kMaxGather) {
    gather[count++] =
        asio::buffer(hellos_.data() + hellos_written_, hellos_.size() - hellos_written_);
    parts[part_count++] = Part{nullptr, hellos_.size() - hellos_written_};
  }
  for (std::size_t k = 0; k < members_.size() && count < kMaxGather; ++k) {
    TcpSendLink* member = members_[(next_first_ + k) % members_.size()];
    if (member != partial_) add_member(member);
  }
  if (!members_.empty()) next_first_ = (next_first_ + 1) % members_.size();
  if (count == 0) return 0;
  boost::system::error_code ec;
  auto n = socket_.write_some(std::span(gather.data(), count), ec);
  TcpSendLink* counted = accountant();
  if (counted != nullptr) ++counted->counted_stats().write_calls;
  if (ec == asio::error::would_block) {
    if (counted != nullptr) ++counted->counted_stats().would_block;
    write_blocked_ = true;
    return 0;
  }
  if (ec) {
    lost(ec, "send failed: " + ec.message(), /*reading=*/false);
    return 0;
  }
  write_blocked_ = false;
  partial_ = nullptr;
  if (took_all != nullptr) {
    std::size_t given = 0;
    for (std::size_t i = 0; i < part_count; ++i) given += parts[i].bytes;
    *took_all = n == given;
  }
  int frames_done = 0;
  for (std::size_t i = 0; i < part_count && n > 0; ++i) {
    const std::size_t mine = std::min(n, parts[i].bytes);
    n -= mine;
    if (parts[i].member == nullptr) {
      hellos_written_ += mine;
      if (hellos_written_ == hellos_.size()) {
        hellos_.clear();
        hellos_written_ = 0;
      }
      continue;
    }
    (void)parts[i].member->wrote(mine, frames_done);
    if (parts[i].member->mid_frame()) partial_ = parts[i].member;
  }
  return frames_done > 0 ? frames_done : 1;
}

void SendConnection::lost(const boost::system::error_code& ec, const std::string& why,
                          bool reading) {
  close_socket();
  ready_ = false;
  write_blocked_ = false;
  control_end_ = 0;
  partial_ = nullptr;
  hellos_.clear();
  hellos_written_ = 0;
  const auto code = ec.value();
  const auto now = std::chrono::steady_clock::now();
  auto deadline = std::chrono::steady_clock::time_point::min();
  for (TcpSendLink* member : members_) {
    if (!member->active()) continue;
    const std::string what =
        reading && member->awaiting_resume()
            ? "the receiver closed the connection during the handshake (hello refused?): " +
                  ec.message()
            : why;
    const bool was_reconnecting = member->reconnecting();
    member->connection_lost(code, what);
    if (!member->reconnecting()) continue;
    // Lost again while reconnecting, past its deadline: no more attempts for it.
    if (was_reconnecting && now >= member->reconnect_deadline()) {
      member->give_up_reconnecting(what);
    } else {
      deadline = std::max(deadline, member->reconnect_deadline());
    }
  }
  if (!any_waiting()) {
    reconnecting_ = false;
    return;
  }
  if (!reconnecting_) {
    reconnecting_ = true;
    backoff_ = kReconnectFirst;
  }
  connecting_ = true;
  retry_after(next_backoff(), deadline);
}

void SendConnection::close_socket() {
  boost::system::error_code ignored;
  socket_.close(ignored);
}

TcpSendLink* SendConnection::accountant() const noexcept {
  return members_.empty() ? nullptr : members_.front();
}

TcpSendLink* SendConnection::member_of(std::uint32_t stream_id) const noexcept {
  for (TcpSendLink* member : members_) {
    if (member->stream_id() == stream_id) return member;
  }
  return nullptr;
}

bool SendConnection::any_waiting() const noexcept {
  return std::any_of(members_.begin(), members_.end(),
                     [](const TcpSendLink* member) { return member->reconnecting(); });
}

}  // namespace boreal::transport::tcp_medium
