#include "inproc/inproc_doorbell.hpp"

#include <unistd.h>

#include <boost/asio/error.hpp>

namespace boreal::transport::inproc_medium {

Doorbell::Doorbell(EventLoop& loop, int fd, std::uint64_t& read_calls)
    : loop_(loop), descriptor_(loop.context(), fd), read_calls_(read_calls) {}

Doorbell::~Doorbell() {
  // release() aborts the pending wait; its handler then runs (or is destroyed with the loop)
  // with operation_aborted and touches nothing of this object.
  boost::system::error_code ignored;
  descriptor_.cancel(ignored);
  (void)descriptor_.release();
}

void Doorbell::listen() {
  if (pending_) return;
  pending_ = true;
  descriptor_.async_wait(boost::asio::posix::stream_descriptor::wait_read,
                         with_memory(memory_, [this](const boost::system::error_code& ec) {
                           if (ec == boost::asio::error::operation_aborted) return;
                           pending_ = false;
                           // Reset the counter so the next write is a fresh edge. A failed
                           // read (EAGAIN: a spurious readiness) leaves nothing to reset.
                           std::uint64_t count = 0;
                           [[maybe_unused]] const auto n =
                               ::read(descriptor_.native_handle(), &count, sizeof count);
                           ++read_calls_;
                           loop_.notify();
                         }));
}

}  // namespace boreal::transport::inproc_medium
