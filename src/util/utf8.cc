#include "util/utf8.h"

#include <algorithm>

namespace sat {
namespace {

constexpr uint32_t kReplacement = 0xfffd;

bool IsContinuation(unsigned char c) { return (c & 0xc0) == 0x80; }

void AppendCodePoint(uint32_t cp, std::string* out) {
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xc0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3f)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xe0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3f)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3f)));
  } else {
    out->push_back(static_cast<char>(0xf0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3f)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3f)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3f)));
  }
}

// Ranges of code points, first and last included.
struct Range {
  uint32_t first, last;
};

// Combining marks and zero-width characters: no column of their own.
constexpr Range kZeroWidth[] = {
    {0x0300, 0x036f}, {0x0483, 0x0489}, {0x0591, 0x05bd}, {0x0610, 0x061a}, {0x064b, 0x065f},
    {0x0e31, 0x0e31}, {0x0e34, 0x0e3a}, {0x0e47, 0x0e4e}, {0x1ab0, 0x1aff}, {0x1dc0, 0x1dff},
    {0x200b, 0x200f}, {0x202a, 0x202e}, {0x2060, 0x2064}, {0x20d0, 0x20ff}, {0xfe00, 0xfe0f},
    {0xfe20, 0xfe2f}, {0xfeff, 0xfeff}, {0xe0100, 0xe01ef},
};

// East Asian wide and fullwidth characters, and the emoji terminals draw two columns wide.
constexpr Range kWide[] = {
    {0x1100, 0x115f},   {0x231a, 0x231b},   {0x2329, 0x232a},   {0x23e9, 0x23ec},   {0x23f0, 0x23f0},
    {0x23f3, 0x23f3},   {0x25fd, 0x25fe},   {0x2614, 0x2615},   {0x2648, 0x2653},   {0x267f, 0x267f},
    {0x2693, 0x2693},   {0x26a1, 0x26a1},   {0x26aa, 0x26ab},   {0x26bd, 0x26be},   {0x26c4, 0x26c5},
    {0x26ce, 0x26ce},   {0x26d4, 0x26d4},   {0x26ea, 0x26ea},   {0x26f2, 0x26f3},   {0x26f5, 0x26f5},
    {0x26fa, 0x26fa},   {0x26fd, 0x26fd},   {0x2705, 0x2705},   {0x270a, 0x270b},   {0x2728, 0x2728},
    {0x274c, 0x274c},   {0x274e, 0x274e},   {0x2753, 0x2755},   {0x2757, 0x2757},   {0x2795, 0x2797},
    {0x27b0, 0x27b0},   {0x27bf, 0x27bf},   {0x2b1b, 0x2b1c},   {0x2b50, 0x2b50},   {0x2b55, 0x2b55},
    {0x2e80, 0x303e},   {0x3041, 0x33ff},   {0x3400, 0x4dbf},   {0x4e00, 0x9fff},   {0xa000, 0xa4cf},
    {0xa960, 0xa97f},   {0xac00, 0xd7a3},   {0xf900, 0xfaff},   {0xfe10, 0xfe19},   {0xfe30, 0xfe6f},
    {0xff00, 0xff60},   {0xffe0, 0xffe6},   {0x16fe0, 0x16fe4}, {0x17000, 0x18cff}, {0x1b000, 0x1b2ff},
    {0x1f004, 0x1f004}, {0x1f0cf, 0x1f0cf}, {0x1f18e, 0x1f18e}, {0x1f191, 0x1f19a}, {0x1f200, 0x1f251},
    {0x1f300, 0x1f320}, {0x1f32d, 0x1f335}, {0x1f337, 0x1f37c}, {0x1f37e, 0x1f393}, {0x1f3a0, 0x1f3ca},
    {0x1f3cf, 0x1f3d3}, {0x1f3e0, 0x1f3f0}, {0x1f3f4, 0x1f3f4}, {0x1f3f8, 0x1f43e}, {0x1f440, 0x1f440},
    {0x1f442, 0x1f4fc}, {0x1f4ff, 0x1f53d}, {0x1f54b, 0x1f54e}, {0x1f550, 0x1f567}, {0x1f57a, 0x1f57a},
    {0x1f595, 0x1f596}, {0x1f5a4, 0x1f5a4}, {0x1f5fb, 0x1f64f}, {0x1f680, 0x1f6c5}, {0x1f6cc, 0x1f6cc},
    {0x1f6d0, 0x1f6d2}, {0x1f6d5, 0x1f6d7}, {0x1f6eb, 0x1f6ec}, {0x1f6f4, 0x1f6fc}, {0x1f7e0, 0x1f7eb},
    {0x1f90c, 0x1f93a}, {0x1f93c, 0x1f945}, {0x1f947, 0x1f9ff}, {0x1fa70, 0x1faff}, {0x20000, 0x2fffd},
    {0x30000, 0x3fffd},
};

template <size_t N>
bool InRanges(uint32_t cp, const Range (&ranges)[N]) {
  // Sorted and apart: the last range starting at or below cp is the only one that can hold it.
  const Range* end = ranges + N;
  const Range* after = std::upper_bound(ranges, end, cp, [](uint32_t c, const Range& r) { return c < r.first; });
  return after != ranges && cp <= (after - 1)->last;
}

}  // namespace

uint32_t NextCodePoint(std::string_view s, size_t* i) {
  const size_t start = *i;
  const auto lead = static_cast<unsigned char>(s[(*i)++]);
  if (lead < 0x80) return lead;
  int extra = 0;
  uint32_t cp = 0;
  uint32_t least = 0;
  if (lead >= 0xc2 && lead <= 0xdf) {
    extra = 1, cp = lead & 0x1f, least = 0x80;
  } else if (lead >= 0xe0 && lead <= 0xef) {
    extra = 2, cp = lead & 0x0f, least = 0x800;
  } else if (lead >= 0xf0 && lead <= 0xf4) {
    extra = 3, cp = lead & 0x07, least = 0x10000;
  } else {
    return kReplacement;
  }
  size_t at = start + 1;
  for (int k = 0; k < extra; ++k, ++at) {
    if (at >= s.size() || !IsContinuation(static_cast<unsigned char>(s[at]))) return kReplacement;
    cp = (cp << 6) | (static_cast<unsigned char>(s[at]) & 0x3f);
  }
  if (cp < least || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return kReplacement;
  *i = at;
  return cp;
}

size_t CompleteUtf8Length(std::string_view s) {
  // The last lead byte among the final three, and whether the bytes after it are fewer than it announces.
  for (size_t back = 1; back <= 3 && back <= s.size(); ++back) {
    const auto c = static_cast<unsigned char>(s[s.size() - back]);
    if (IsContinuation(c)) continue;
    const size_t need = c >= 0xf8 ? 1 : c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 1;
    return need > back ? s.size() - back : s.size();
  }
  return s.size();
}

size_t Utf8PrefixLength(std::string_view s, size_t max_bytes) {
  if (s.size() <= max_bytes) return s.size();
  return CompleteUtf8Length(s.substr(0, max_bytes));
}

namespace {

// Calls f(character, malformed) for each character of `s` in order: a whole UTF-8 sequence, or one byte that does
// not begin one (malformed); f gets the code point too.
template <class F>
void EachCharacter(std::string_view s, F&& f) {
  for (size_t i = 0; i < s.size();) {
    const size_t start = i;
    const uint32_t cp = NextCodePoint(s, &i);
    f(s.substr(start, i - start), cp, cp == kReplacement && i == start + 1);
  }
}

}  // namespace

std::string ValidUtf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  EachCharacter(s, [&](std::string_view c, uint32_t, bool malformed) {
    if (malformed) {
      AppendCodePoint(kReplacement, &out);
    } else {
      out.append(c);
    }
  });
  return out;
}

std::string VisibleText(std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(s.size());
  EachCharacter(s, [&](std::string_view c, uint32_t cp, bool malformed) {
    if (!malformed && cp >= 0x20 && cp != 0x7f && !(cp >= 0x80 && cp <= 0x9f)) {
      out.append(c);
      return;
    }
    for (const char byte : c) {
      const auto b = static_cast<unsigned char>(byte);
      out += "\\x";
      out.push_back(kHex[b >> 4]);
      out.push_back(kHex[b & 15]);
    }
  });
  return out;
}

std::string ClipText(std::string_view s, size_t max_bytes) {
  if (s.size() <= max_bytes) return std::string(s);
  return std::string(s.substr(0, Utf8PrefixLength(s, max_bytes))) + "...";
}

size_t DisplayWidth(std::string_view s) {
  size_t width = 0;
  for (size_t i = 0; i < s.size();) {
    const uint32_t cp = NextCodePoint(s, &i);
    if (cp < 0x300) {
      ++width;
    } else if (InRanges(cp, kZeroWidth)) {
      continue;
    } else {
      width += InRanges(cp, kWide) ? 2 : 1;
    }
  }
  return width;
}

}  // namespace sat
