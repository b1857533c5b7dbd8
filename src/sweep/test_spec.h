// Parsing spec text in tests (header only; not part of the library): the spec, or the message of its error, named
// "sweep.yaml" as the file; either fails the test when the text does the other.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "sweep/spec.h"

namespace sat::sweep::testing {

inline Spec MustParse(std::string_view yaml) {
  auto spec = ParseSpec(yaml, "sweep.yaml");
  EXPECT_TRUE(spec) << spec.error().message;
  return spec.ok() ? *spec : Spec();
}

// The usage error's message for `yaml`.
inline std::string ErrorOf(std::string_view yaml) {
  auto spec = ParseSpec(yaml, "sweep.yaml");
  if (spec) {
    ADD_FAILURE() << "parsed: " << yaml;
    return "";
  }
  EXPECT_EQ(spec.error().exit_code, kExitUsage);
  return spec.error().message;
}

}  // namespace sat::sweep::testing
