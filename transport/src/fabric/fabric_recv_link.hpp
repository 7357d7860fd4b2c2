// The receiving end of a fabric-msg link. Private: made by FabricListener::expect().
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <boreal/transport/buffer_pool.hpp>
#include <boreal/transport/credit_window.hpp>
#include <boreal/transport/event_loop.hpp>
#include <boreal/transport/link.hpp>

#include "fabric/fabric_context.hpp"

namespace boreal::transport::fabric_medium {

// What a link needs of the listener that owns the shared endpoint.
class Hub {
 public:
  virtual ~Hub() = default;
  // Reads the shared CQ, handing each completion to its owner. Returns work done.
  virtual int progress() = 0;
  virtual FabricContext& context() = 0;
};

// `window` buffers of header + max payload, registered once, each posted with fi_trecv
// tagged with the stream id. Receive completions (in arrival order: the provider matches
// posted buffers in order and the sender's sends are ordered) are queued by the hub and
// delivered by poll(); each buffer is reposted as soon as the sink returned, and freed
// slots are granted back `credit_batch` at a time with fi_tinject.
class FabricRecvLink final : public RecvLink {
 public:
  FabricRecvLink(EventLoop& loop, Hub& hub, const LinkOptions& options, std::uint32_t owner);
  FabricRecvLink(const FabricRecvLink&) = delete;
  FabricRecvLink& operator=(const FabricRecvLink&) = delete;
  ~FabricRecvLink() override;

  // Registers the pool and posts every buffer.
  [[nodiscard]] Result<void> start();
  // A hello for this stream came from `peer`: grants the initial credit.
  void attach(fi_addr_t peer, std::string peer_text);
  [[nodiscard]] bool attached() const noexcept { return peer_.has_value(); }
  // From the hub: buffer `slot` holds a message of `length` bytes.
  void on_received(std::uint32_t slot, std::size_t length);
  void fail_link(const Error& error);

  int poll(FrameSink& sink) override;
  bool arm() override;
  LinkState state() const override { return state_; }
  const Error* error() const override { return error_ ? &*error_ : nullptr; }
  const LinkStats& stats() const override { return stats_; }
  std::uint32_t stream_id() const override { return options_.stream_id; }
  double free_capacity() const override;
  [[nodiscard]] const LinkOptions& options() const noexcept { return options_; }

 private:
  struct Arrived {
    std::uint32_t slot = 0;
    std::size_t length = 0;
  };

  [[nodiscard]] Result<void> post(std::uint32_t slot);
  bool deliver(FrameSink& sink, const Arrived& arrived);
  int flush_control();
  [[nodiscard]] std::string describe() const;

  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
  EventLoop& loop_;
  Hub& hub_;
  LinkOptions options_;
  FrameLimits limits_;
  std::uint32_t owner_;
  BufferPool pool_;
  Registration registration_;
  std::vector<OpContext> ops_;
  std::vector<Arrived> arrived_;  // ring of window entries: at most window receives are posted
  std::uint64_t arrived_head_ = 0;
  std::uint64_t arrived_tail_ = 0;
  std::optional<fi_addr_t> peer_;
  std::string peer_text_;
  ReceiverCredits credits_;
  std::uint64_t credit_to_send_ = 0;  // cumulative total not yet injected (0: none)
  std::optional<std::uint64_t> ack_to_send_;
  std::uint64_t next_sequence_ = 1;
  std::uint64_t frames_received_ = 0;
  LinkState state_ = LinkState::connecting;
  std::optional<Error> error_;
  LinkStats stats_;
};

}  // namespace boreal::transport::fabric_medium
