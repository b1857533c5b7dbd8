// For tests: seeded random inputs grown from a fuzz corpus (fuzz/corpus/<target>/), so a parser meets the same
// kind of bad input in every build, also where clang's libFuzzer is missing (fuzz/CMakeLists.txt). Each input is
// a corpus file with random bytes flipped, inserted or deleted, cut short, or spliced with another file.
// Deterministic for a seed. Header-only: test binaries include it, the libraries never do.
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

namespace sat {

inline std::vector<std::string> SeededMutations(const std::string& corpus_dir, int count, uint32_t seed) {
  std::vector<std::string> seeds;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(corpus_dir, ec)) {
    std::ifstream in(entry.path(), std::ios::binary);
    seeds.emplace_back(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  if (seeds.empty()) seeds.emplace_back();
  std::mt19937 rng(seed);
  std::vector<std::string> out;
  for (int i = 0; i < count; ++i) {
    std::string s = seeds[rng() % seeds.size()];
    for (int edits = 1 + static_cast<int>(rng() % 8); edits > 0; --edits) {
      const size_t at = s.empty() ? 0 : rng() % s.size();
      switch (rng() % 5) {
        case 0: if (!s.empty()) s[at] = static_cast<char>(rng()); break;
        case 1: s.insert(s.begin() + static_cast<std::ptrdiff_t>(at), static_cast<char>(rng())); break;
        case 2: if (!s.empty()) s.erase(at, 1 + rng() % 8); break;
        case 3: s.resize(at); break;
        default: s += seeds[rng() % seeds.size()].substr(0, rng() % 64); break;
      }
    }
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace sat
