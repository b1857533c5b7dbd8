// libFuzzer target: one datagram of the helper protocol (docs/helper-protocol.md) as any process on the machine
// could send it to saturate's socket.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "measure/helper_message.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  (void)sat::measure::ParseHelperMessage(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
