// The listening half of an inproc wake-up: an eventfd the peer writes, watched by this
// end's EventLoop. Private to the medium.
#pragma once

#include <cstdint>

#include <boost/asio/posix/stream_descriptor.hpp>

#include <boreal/transport/event_loop.hpp>

namespace boreal::transport::inproc_medium {

class Doorbell {
 public:
  // `fd` stays owned by the ring; `read_calls` counts this end's eventfd reads (LinkStats).
  Doorbell(EventLoop& loop, int fd, std::uint64_t& read_calls);
  Doorbell(const Doorbell&) = delete;
  Doorbell& operator=(const Doorbell&) = delete;
  // Cancels a pending wait and hands the fd back without closing it.
  ~Doorbell();

  // Issues an async_wait for readability unless one is pending. When it completes (during the
  // loop's poll or wait), the eventfd is drained and the loop notified. Call before saying
  // "asleep": asio's epoll registration is edge-triggered, and the peer writes only after
  // reading that flag, so the write is an edge this wait sees.
  void listen();

 private:
  EventLoop& loop_;
  boost::asio::posix::stream_descriptor descriptor_;
  std::uint64_t& read_calls_;
  bool pending_ = false;
  SharedHandlerMemory memory_ = make_handler_memory();  // the wait's handler (handler_memory.hpp)
};

}  // namespace boreal::transport::inproc_medium
