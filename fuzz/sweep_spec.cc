// libFuzzer target: the sweep spec parser (W&B YAML with saturate's settings) on any bytes, and the plan of what
// it accepts. It must return a value or an error naming the problem; never crash, hang or read out of bounds.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "sweep/plan.h"
#include "sweep/spec.h"
#include "util/json_text.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view yaml(reinterpret_cast<const char*>(data), size);
  auto spec = sat::sweep::ParseSpec(yaml, "fuzz.yaml");
  if (!spec) return 0;
  // A plan of bounded size: a spec may legally ask for 100,000 runs, which is slow, not wrong.
  auto count = sat::sweep::RunCount(*spec);
  if (!count.ok() || *count > 1000) return 0;
  auto runs = sat::sweep::ExpandRuns(*spec, 19);
  if (runs) {
    for (const auto& run : *runs) (void)sat::JsonText(run.values);
  }
  return 0;
}
