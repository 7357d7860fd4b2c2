#include <boreal/transport/inproc_medium.hpp>

#include "inproc/inproc_ring.hpp"

namespace boreal::transport {

Result<InprocPair> make_inproc_link(EventLoop& sender_loop, EventLoop& receiver_loop,
                                    const LinkOptions& options) {
  auto ring = inproc_medium::InprocRing::create(options);
  if (!ring) return ring.error();
  InprocPair pair;
  // The receiver first: it publishes the initial grant that the sender picks up.
  pair.recv = inproc_medium::make_recv_end(receiver_loop, ring.value());
  pair.send = inproc_medium::make_send_end(sender_loop, std::move(ring).value());
  return pair;
}

}  // namespace boreal::transport
