#include "datastore/record.h"

#include <fmt/format.h>

#include <charconv>
#include <exception>

#include "util/json_text.h"

namespace sat::datastore {
namespace {

constexpr std::string_view kLogHeader = "saturate partial copy ";

bool NeedsEscape(unsigned char c) { return c < 0x20 || c == 0x7f || c == '%'; }

std::optional<int> HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return std::nullopt;
}

std::optional<std::string> Unescape(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '%') {
      out.push_back(s[i]);
      continue;
    }
    if (i + 2 >= s.size()) return std::nullopt;
    const auto hi = HexDigit(s[i + 1]), lo = HexDigit(s[i + 2]);
    if (!hi || !lo) return std::nullopt;
    out.push_back(static_cast<char>(*hi * 16 + *lo));
    i += 2;
  }
  return out;
}

template <class T>
bool ParseNumber(std::string_view s, T* out, int base = 10) {
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), *out, base);
  return ec == std::errc() && end == s.data() + s.size() && !s.empty();
}

}  // namespace

std::string RecordText(const Record& r) {
  nlohmann::json sums = nlohmann::json::array();
  for (const std::optional<uint64_t>& x : r.xxh3) sums.push_back(x ? nlohmann::json(fmt::format("{:016x}", *x)) : nlohmann::json());
  nlohmann::json j = {{"manifest", ManifestToJson(r.manifest)}, {"copy_s", r.copy_s}, {"made_unix", r.made_unix}};
  if (!r.xxh3.empty()) j["xxh3"] = std::move(sums);
  return JsonText(j, 1) + "\n";
}

Result<Record> ParseRecord(std::string_view text) {
  try {
    const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
    if (j.is_discarded()) return Error{"not JSON"};
    if (!j.is_object() || !j.contains("manifest")) return Error{"no \"manifest\" in it"};
    auto manifest = ManifestFromJson(j.at("manifest"));
    if (!manifest) return manifest.error();
    Record r;
    r.manifest = std::move(*manifest);
    if (j.contains("xxh3")) {
      const nlohmann::json& sums = j.at("xxh3");
      if (!sums.is_array()) return Error{"\"xxh3\" is not a list"};
      if (sums.size() != r.manifest.entries.size()) {
        return Error{fmt::format("{} checksums for {} entries", sums.size(), r.manifest.entries.size())};
      }
      for (const nlohmann::json& x : sums) {
        if (x.is_null()) {
          r.xxh3.emplace_back();
          continue;
        }
        uint64_t value = 0;
        if (!x.is_string() || !ParseNumber(x.get_ref<const std::string&>(), &value, 16)) {
          return Error{"a checksum is not 16 hex digits"};
        }
        r.xxh3.emplace_back(value);
      }
    }
    if (j.contains("copy_s") && j.at("copy_s").is_number_float()) r.copy_s = j.at("copy_s").get<double>();
    if (j.contains("made_unix") && j.at("made_unix").is_number_integer()) r.made_unix = j.at("made_unix").get<int64_t>();
    return r;
  } catch (const std::exception& e) {
    // nlohmann's errors on odd input, or memory: a record that cannot be read is not one.
    return Error{fmt::format("unreadable: {}", e.what())};
  }
}

std::string PartialLogHeader(const std::string& key) { return fmt::format("{}{}\n", kLogHeader, key); }

std::string PartialLogLine(const std::string& rel, const LoggedFile& f) {
  std::string escaped;
  for (const char c : rel) {
    if (NeedsEscape(static_cast<unsigned char>(c))) {
      escaped += fmt::format("%{:02x}", static_cast<unsigned char>(c));
    } else {
      escaped.push_back(c);
    }
  }
  return fmt::format("{} {} {:016x} {}\n", f.size, f.mtime_ns, f.xxh3, escaped);
}

PartialLog ParsePartialLog(std::string_view text) {
  PartialLog log;
  bool first = true;
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    if (nl == std::string_view::npos) break;  // torn: the writer was killed mid-line
    const std::string_view line = text.substr(0, nl);
    text.remove_prefix(nl + 1);
    if (first && line.starts_with(kLogHeader)) {
      log.key = std::string(line.substr(kLogHeader.size()));
      first = false;
      continue;
    }
    first = false;
    // size mtime_ns xxh3 rel
    std::string_view fields[3];
    std::string_view rest = line;
    bool ok = true;
    for (std::string_view& field : fields) {
      const size_t sp = rest.find(' ');
      if (sp == std::string_view::npos) {
        ok = false;
        break;
      }
      field = rest.substr(0, sp);
      rest.remove_prefix(sp + 1);
    }
    LoggedFile f;
    if (!ok || !ParseNumber(fields[0], &f.size) || !ParseNumber(fields[1], &f.mtime_ns) ||
        !ParseNumber(fields[2], &f.xxh3, 16)) {
      continue;
    }
    auto rel = Unescape(rest);
    if (!rel) continue;
    log.files[*rel] = f;
  }
  return log;
}

}  // namespace sat::datastore
