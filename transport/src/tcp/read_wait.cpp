#include "tcp/read_wait.hpp"

namespace boreal::transport::tcp_medium {

void ReadWait::new_connection() {
  pending_ = false;
  seen_empty_ = false;
  ++generation_;
  // The old socket's aborted wait may still hold the memory until its handler runs; the new
  // socket's waits get their own (once per connection).
  memory_ = make_handler_memory();
}

void ReadWait::arm(Socket& socket) {
  if (pending_) return;
  pending_ = true;
  seen_empty_ = false;
  socket.async_wait(Socket::wait_read,
                    with_memory(memory_, [this, alive = alive_, generation = generation_](
                                             const boost::system::error_code&) {
                      if (!*alive) return;
                      if (generation == generation_) pending_ = false;
                      loop_.notify();
                    }));
}

}  // namespace boreal::transport::tcp_medium
