// Sizes given by a person: a store's cap, a limit in a spec.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace sat {

// Parses a size in bytes: "1048576", "512K", "200M", "1.5G", "2T", with an optional "B" or "iB" ("200MiB",
// "200MB"); every unit is binary (1K = 1024 bytes), as free space and caches are counted. nullopt for anything
// else, negative, or past 2^63.
std::optional<uint64_t> ParseBytes(std::string_view s);

}  // namespace sat
