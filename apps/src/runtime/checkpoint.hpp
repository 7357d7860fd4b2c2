// A node's checkpoint (docs/faults.md): where each of its input streams stands and what each
// of its sinks has written, so that a restarted node (`boreal run FILE --node NAME` again)
// resumes its inputs after the last frame whose effects the checkpoint holds.
//
// The node writes it on its thread between duty cycles, when every frame delivered so far has
// gone through its boxes into its sinks (a checkpointing node runs only boxes without state
// and one thread: parse_network() checks), then acknowledges each input up to the frame it
// recorded, so the senders keep every frame after it. The file is JSON, replaced atomically
// (written beside it, then renamed over it), and removed when the node finishes its run.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include <boreal/transport/error.hpp>

namespace boreal::runtime {

// A sink's running state, carried across a restart.
struct SinkState {
  std::uint64_t file_bytes = 0;  // of its CSV output (0 without one)
  std::uint64_t tuples = 0;
  std::uint64_t batches = 0;
  std::uint64_t bytes = 0;
  std::uint32_t crc = 0;
  std::uint64_t lost = 0;
  std::uint64_t duplicated = 0;
  std::uint64_t out_of_order = 0;
  std::uint64_t next_seq = 0;
  bool operator==(const SinkState&) const = default;
};

struct Checkpoint {
  std::string node;
  std::map<std::string, std::uint64_t, std::less<>> inputs;  // stream -> last frame it holds
  std::map<std::string, SinkState, std::less<>> sinks;       // sink box -> its state
  bool operator==(const Checkpoint&) const = default;
};

// The checkpoint at `path`; nullopt when there is none (a first run). An Error names the file
// and what is wrong with it (not JSON, another node's, a field missing or of the wrong type).
[[nodiscard]] transport::Result<std::optional<Checkpoint>> load_checkpoint(const std::string& path,
                                                                           const std::string& node);

// Replaces the checkpoint at `path` atomically (a reader sees the old one or the new one).
[[nodiscard]] transport::Result<void> save_checkpoint(const std::string& path,
                                                      const Checkpoint& checkpoint);

}  // namespace boreal::runtime
