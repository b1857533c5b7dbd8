#include "util/utf8.h"

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

}  // namespace sat
