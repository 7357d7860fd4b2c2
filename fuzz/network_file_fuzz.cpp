// libFuzzer target: the network-file loader. Any text must give a network or a list of
// located problems (parse_network), never a crash, a hang or an exception out of it.
#include <cstddef>
#include <cstdint>
#include <string>

#include "spec/network_spec.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  auto spec = boreal::runtime::parse_network(text, "fuzz.yaml");
  if (!spec && spec.error().messages.empty()) __builtin_trap();  // an error says what is wrong
  return 0;
}
