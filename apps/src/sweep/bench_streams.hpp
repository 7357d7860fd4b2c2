// `boreal bench --streams N`: many links into one node. The sweep's two-node file, with its one
// source -> sink pair repeated N times: N streams from the sending node into the receiving one,
// each its own link, the sweep's total rate shared among them (docs/measurement.md, README
// "Many links into one node").
#pragma once

#include <cstdint>
#include <string>

#include <boreal/transport/error.hpp>

#include "spec/network_spec.hpp"

namespace boreal::runtime {

// The network `spec`, parsed from `file_text`, with its one source box and one sink box
// repeated `streams` times: box `gen` becomes gen-0 .. gen-(N-1), its stream `ticks` ticks-0
// ..., the sink `sink` sink-0 ...; each copy of the source draws its content from seed + i,
// so no two streams carry the same tuples, and a `links` entry of the stream is repeated for
// every copy. The rest of the file is kept as written. Fails, naming the file, unless the
// spec has exactly one source, one sink reading that source's one stream, and no other box.
[[nodiscard]] transport::Result<std::string> many_streams_network(const NetworkSpec& spec,
                                                                  const std::string& file_text,
                                                                  std::uint32_t streams);

}  // namespace boreal::runtime
