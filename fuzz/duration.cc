// libFuzzer target: durations as people write them (--budget, --timeout, a spec's timeout, Slurm's time). What is
// accepted must be finite and within kMaxDurationS, so no deadline computed from it can overflow.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "util/strings.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  if (auto s = sat::ParseDuration(text)) {
    if (!std::isfinite(*s) || *s < 0 || *s > sat::kMaxDurationS) __builtin_trap();
  }
  (void)sat::IsNoLimit(text);
  return 0;
}
