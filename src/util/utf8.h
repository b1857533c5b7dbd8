// Text from child processes is arbitrary bytes. These helpers cut it on character boundaries and make it valid
// UTF-8 where a consumer requires that (JSON, Prometheus labels), so no byte a script prints can abort saturate.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace sat {

// Decodes the code point at s[*i] (RFC 3629: no overlong forms, surrogates or values above U+10FFFF) and advances
// *i past it. A malformed or truncated sequence yields U+FFFD and advances one byte. Requires *i < s.size().
uint32_t NextCodePoint(std::string_view s, size_t* i);

// The length of `s` without a multi-byte sequence cut off at its end (at most 3 bytes shorter).
size_t CompleteUtf8Length(std::string_view s);

// The longest prefix of `s` of at most `max_bytes` bytes that does not end inside a UTF-8 sequence. Bytes that are
// not UTF-8 at all count as characters of their own, so the result is never shorter than max_bytes - 3.
size_t Utf8PrefixLength(std::string_view s, size_t max_bytes);

// `s` as valid UTF-8: every malformed byte becomes U+FFFD. Valid input comes back unchanged.
std::string ValidUtf8(std::string_view s);

// `s` safe to print on a terminal: control characters (C0, DEL, C1) and bytes that are not UTF-8 become visible
// escapes ("\x1b", "\x9b", "\xff"); printable text, multi-byte characters included, is unchanged. A script's escape sequences then cannot move the cursor, retitle the window or hide text.
std::string VisibleText(std::string_view s);

// The columns `s` takes on a terminal: one per character, none for a combining mark or a zero-width character,
// two for an East Asian wide or fullwidth character (CJK, Hangul, fullwidth forms, most emoji); a malformed byte
// is one character (U+FFFD). Control characters count one (callers show them with VisibleText first).
size_t DisplayWidth(std::string_view s);

// At most `max_bytes` of `s` cut on a character boundary, with "..." after it when something was cut.
std::string ClipText(std::string_view s, size_t max_bytes);

}  // namespace sat
