// A node's checkpoint (docs/faults.md): where each of its input streams stands and what each
// of its sinks has written, so that a restarted node (`boreal run FILE --node NAME` again)
// resumes its inputs after the last frame whose effects the checkpoint holds.
//
// The node writes it on its thread between duty cycles, when every frame delivered so far has
// gone through its boxes into its sinks (a checkpointing node runs one thread and only boxes
// without state or whose state it saves: parse_network() checks), then acknowledges each input up
// to the frame it recorded, so the senders keep every frame after it. The file is JSON, replaced
// atomically (written beside it, then renamed over it), and removed when the node finishes its run.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

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

// A sending link's end, carried across a restart: the frames its receiver may still need
// (header and payload, back to back) and the rows its writer held for lack of a frame.
struct OutputState {
  std::uint32_t sender_id = 0;
  std::uint64_t committed = 0;  // frames committed so far
  std::vector<std::byte> frames;
  std::vector<std::byte> backlog;
  bool operator==(const OutputState&) const = default;
};

struct Checkpoint {
  std::string node;
  std::uint64_t generation = 0;  // counts the node's checkpoints; names its frames file
  std::map<std::string, std::uint64_t, std::less<>> inputs;  // stream -> last frame it holds
  std::set<std::string, std::less<>> inputs_ended;           // streams whose end it holds
  std::map<std::string, SinkState, std::less<>> sinks;       // sink box -> its state
  std::map<std::string, OutputState, std::less<>> outputs;   // "stream>node" -> its link
  std::map<std::string, std::vector<std::byte>, std::less<>> box_states;  // ops::Box::save_state
  std::set<std::string, std::less<>> boxes_finished;         // boxes whose inputs all ended
  bool operator==(const Checkpoint&) const = default;
};

// The key of a sending link in Checkpoint::outputs.
[[nodiscard]] inline std::string output_key(const std::string& stream, const std::string& to) {
  return stream + ">" + to;
}

// The checkpoint at `path`; nullopt when there is none (a first run). An Error names the file
// and what is wrong with it (not JSON, another node's, a field missing or of the wrong type).
[[nodiscard]] transport::Result<std::optional<Checkpoint>> load_checkpoint(const std::string& path,
                                                                           const std::string& node);

// Replaces the checkpoint at `path` atomically (a reader sees the old one or the new one).
// The outputs' bytes go to a file of their own, PATH.frames.GENERATION, written first; the
// JSON names it; the previous generation's file is removed after the rename.
[[nodiscard]] transport::Result<void> save_checkpoint(const std::string& path,
                                                      const Checkpoint& checkpoint);

// Removes the checkpoint and its frames file (the node finished its run).
void remove_checkpoint(const std::string& path, std::uint64_t generation);

}  // namespace boreal::runtime
