// `boreal bench --streams N`: many links into one node. The sweep's two-node file, with its one
// source -> sink pair repeated N times: N streams from the sending node into the receiving one,
// each its own link, the sweep's total rate shared among them (docs/measurement.md, README
// "Many links into one node").
#pragma once

#include <cstdint>
#include <string>

#include <boreal/transport/error.hpp>

namespace boreal::runtime {

// The network file `file_text` (named `file_name` in errors) with its one source box and one
// sink box repeated `streams` times: box `gen` becomes gen-0 .. gen-(N-1), its stream `ticks`
// ticks-0 ..., the sink `sink` sink-0 ...; each copy of the source draws its content from
// seed + i (seed 1 when the file gives none), so no two streams carry the same tuples, and a
// `links` entry of the stream is repeated for every copy. Fails, naming the file, unless it
// has exactly one source, one sink reading that source's one stream, and no other box.
[[nodiscard]] transport::Result<std::string> many_streams_network(const std::string& file_text,
                                                                  const std::string& file_name,
                                                                  std::uint32_t streams);

}  // namespace boreal::runtime
