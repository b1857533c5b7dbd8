// The one way saturate turns JSON into text. Strings in it may come from a child's output, which is arbitrary
// bytes; nlohmann-json's plain dump() throws type_error.316 on invalid UTF-8, so every writer goes through here,
// where a malformed byte becomes U+FFFD instead.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace sat {

template <class Json>
std::string JsonText(const Json& j, int indent = -1) {
  return j.dump(indent, ' ', false, Json::error_handler_t::replace);
}

}  // namespace sat
