// libFuzzer target: every decoder of bytes a peer sends. The input is read as a frame (a
// 32-byte header, then its payload: decode_header, verify_checksum both reading the payload
// and from its CRC, which must agree, and decode_hello on a hello frame's payload), as a TCP
// hello payload, and as the fabric media's handshake messages (the hello extension and the
// RMA ring setup). A decoder must refuse bad bytes with an error, never read out of bounds or
// crash; ASan and UBSan watch.
#include <cstddef>
#include <cstdint>
#include <span>

#include <boreal/transport/crc32c.hpp>
#include <boreal/transport/frame.hpp>

#include "fabric/fabric_wire.hpp"

namespace transport = boreal::transport;
namespace wire = boreal::transport::fabric_medium;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto bytes = std::as_bytes(std::span<const std::uint8_t>(data, size));
  if (bytes.size() >= transport::kFrameHeaderBytes) {
    const std::span<const std::byte, transport::kFrameHeaderBytes> head(
        bytes.data(), transport::kFrameHeaderBytes);
    const transport::FrameLimits limits{
        .stream_id = 7, .tuple_bytes = 16, .max_payload_bytes = 4096};
    if (auto header = transport::decode_header(head, limits)) {
      const auto rest = bytes.subspan(transport::kFrameHeaderBytes);
      if (header.value().payload_bytes <= rest.size()) {
        const auto payload = rest.first(header.value().payload_bytes);
        // The check from a sink's CRC (one pass per payload) must judge every frame alike.
        const bool read = transport::verify_checksum(header.value(), head, payload).has_value();
        const bool from_crc = transport::verify_checksum_from_crc(header.value(), head,
                                                                  transport::crc32c(payload))
                                  .has_value();
        if (read != from_crc) __builtin_trap();
        if ((header.value().flags & transport::kFlagHello) != 0)
          (void)transport::decode_hello(payload);
      }
    }
  }
  (void)transport::decode_hello(bytes);
  if (bytes.size() >= wire::kHelloExtensionBytes) {
    (void)wire::decode_extension(bytes.first(wire::kHelloExtensionBytes));
  }
  if (bytes.size() >= wire::kRmaSetupBytes)
    (void)wire::decode_setup(bytes.first(wire::kRmaSetupBytes));
  return 0;
}
