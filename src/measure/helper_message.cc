#include "measure/helper_message.h"

#include <fmt/format.h>

#include <array>
#include <limits>
#include <type_traits>
#include <utility>

#include "util/redact.h"

namespace sat::measure {
namespace {

using json = nlohmann::json;

constexpr int kProtocolVersion = 1;
constexpr std::array<MessageType, 10> kTypes = {MessageType::kHello,    MessageType::kKnob,
                                                MessageType::kProgress, MessageType::kDone,
                                                MessageType::kMetrics,  MessageType::kLoader,
                                                MessageType::kFlops,    MessageType::kTrace,
                                                MessageType::kFlags,    MessageType::kFiles};

// Typed reads of one JSON object's fields; the first problem is kept and later reads are harmless.
class FieldReader {
 public:
  explicit FieldReader(const json& object, std::string where = "") : object_(object), where_(std::move(where)) {}

  const std::string& error() const { return error_; }

  // The field, or null when it is absent or JSON null (an error when `required`).
  const json* Find(const char* key, bool required) {
    auto it = object_.find(key);
    if (it != object_.end() && !it->is_null()) return &*it;
    if (required) Fail(fmt::format("missing field '{}{}'", where_, key));
    return nullptr;
  }

  void String(const char* key, std::string& out, bool required) {
    if (const json* v = Find(key, required)) {
      if (v->is_string()) {
        out = v->get<std::string>();
      } else {
        Fail(fmt::format("field '{}{}' is not a string", where_, key));
      }
    }
  }

  void String(const char* key, std::optional<std::string>& out) {
    std::string value;
    if (Find(key, false) == nullptr) return;
    String(key, value, false);
    if (error_.empty()) out = std::move(value);
  }

  void Bool(const char* key, std::optional<bool>& out) {
    if (const json* v = Find(key, false)) {
      if (v->is_boolean()) {
        out = v->get<bool>();
      } else {
        Fail(fmt::format("field '{}{}' is not true or false", where_, key));
      }
    }
  }

  // A number that must not be negative: counters, times, byte counts.
  template <class T>
  void Count(const char* key, T& out, bool required) {
    if (const json* v = Find(key, required)) {
      if (!v->is_number()) {
        Fail(fmt::format("field '{}{}' is not a number", where_, key));
      } else if (v->get<double>() < 0) {
        Fail(fmt::format("field '{}{}' is negative", where_, key));
      } else if (std::is_integral_v<T> && !(v->get<double>() < static_cast<double>(std::numeric_limits<T>::max()))) {
        Fail(fmt::format("field '{}{}' is too large", where_, key));
      } else {
        out = v->get<T>();
      }
    }
  }

  template <class T>
  void Count(const char* key, std::optional<T>& out) {
    T value{};
    if (Find(key, false) == nullptr) return;
    Count(key, value, false);
    if (error_.empty()) out = value;
  }

  // An object of name -> number; null values are left out, other types are an error.
  void NumberMap(const char* key, std::map<std::string, double>& out) {
    const json* v = Find(key, false);
    if (v == nullptr) return;
    if (!v->is_object()) return Fail(fmt::format("field '{}{}' is not an object", where_, key));
    for (const auto& [name, value] : v->items()) {
      if (value.is_number()) {
        out[name] = value.get<double>();
      } else if (!value.is_null()) {
        return Fail(fmt::format("field '{}{}.{}' is not a number", where_, key, name));
      }
    }
  }

  void Fail(std::string message) {
    if (error_.empty()) error_ = std::move(message);
  }

 private:
  const json& object_;
  std::string where_;
  std::string error_;
};

std::optional<MessageType> TypeFromName(std::string_view name) {
  for (MessageType type : kTypes) {
    if (MessageTypeName(type) == name) return type;
  }
  return std::nullopt;
}

void ReadProgress(FieldReader& in, HelperMessage& m) {
  in.Count("steps", m.steps, true);
  in.Count("samples", m.samples, true);
  in.Count("wait_s", m.wait_s, false);
  in.Count("step_s", m.step_s, false);
  in.NumberMap("phases", m.phases);
  in.NumberMap("metrics", m.metrics);
  if (const json* mem = in.Find("mem", false)) {
    if (!mem->is_object()) return in.Fail("field 'mem' is not an object");
    FieldReader mem_in(*mem, "mem.");
    mem_in.Count("allocated", m.mem_allocated_bytes);
    mem_in.Count("reserved", m.mem_reserved_bytes);
    mem_in.Count("peak", m.mem_peak_bytes);
    in.Fail(mem_in.error());
  }
  in.Count("excluded_s", m.excluded_s);
  in.Count("before_backward_s", m.before_backward_s);
  in.Count("rank", m.rank);
  if (m.type == MessageType::kDone) in.String("reason", m.done_reason, true);
}

void ReadLoader(FieldReader& in, LoaderInfo& l) {
  in.String("key", l.key);
  in.String("site", l.site);
  in.String("dataset", l.dataset);
  in.Bool("iterable", l.iterable);
  in.Count("num_workers", l.num_workers);
  in.Bool("pin_memory", l.pin_memory);
  in.Count("batch_size", l.batch_size);
  in.Count("prefetch_factor", l.prefetch_factor);
  in.Bool("persistent_workers", l.persistent_workers);
  in.Bool("drop_last", l.drop_last);
  if (const json* injected = in.Find("injected", false)) {
    if (!injected->is_object()) return in.Fail("field 'injected' is not an object");
    for (const auto& [name, value] : injected->items()) l.injected[name] = value;
  }
  in.String("samples_from", l.samples_from);
  in.String("step_at", l.step_at);
  in.Count("others", l.others);
  in.Count("last_batch", l.last_batch);
  in.Bool("batchnorm", l.batchnorm);
  in.Count("epoch_samples", l.epoch_samples);
}

// rank, world_size and local_rank, all three or none.
void ReadRank(FieldReader& in, std::optional<RankInfo>& out) {
  std::optional<int64_t> rank, world, local;
  in.Count("rank", rank);
  in.Count("world_size", world);
  in.Count("local_rank", local);
  if (!rank && !world) return;
  if (!rank || !world || *world < 1 || *rank >= *world) {
    return in.Fail("fields 'rank' and 'world_size' must come together, with 0 <= rank < world_size");
  }
  out = RankInfo{*rank, *world, local.value_or(*rank)};
}

void ReadFlops(FieldReader& in, FlopsInfo& f) {
  std::optional<std::string> skipped;
  in.String("skipped", skipped);
  if (skipped) {
    f.skipped = skipped->empty() ? "the helper did not count" : *skipped;
    return;
  }
  in.Count("per_step", f.per_step, true);
  in.Count("per_sample", f.per_sample, true);
  in.Count("samples", f.samples, false);
  in.String("method", f.method, true);
  in.String("dtype", f.dtype, false);
  std::optional<bool> tf32;
  in.Bool("tf32", tf32);
  f.tf32 = tf32.value_or(false);
  in.String("device", f.device, false);
}

void ReadTrace(FieldReader& in, TraceInfo& t) {
  in.String("path", t.path);
  in.Count("steps", t.steps, false);
  in.String("error", t.error);
}

// A list of paths; only absolute ones name a file without the sender's working folder, the rest are left out.
void ReadPaths(FieldReader& in, const char* key, bool required, std::vector<std::string>& out) {
  const json* paths = in.Find(key, required);
  if (paths == nullptr) return;
  if (!paths->is_array()) return in.Fail(fmt::format("field '{}' is not a list", key));
  for (const auto& p : *paths) {
    if (!p.is_string()) return in.Fail(fmt::format("field '{}' holds a non-string", key));
    std::string path = p.get<std::string>();
    if (!path.empty() && path[0] == '/' && path.find('\0') == std::string::npos) out.push_back(std::move(path));
  }
}

void ReadFiles(FieldReader& in, FilesInfo& f) {
  in.Count("opens", f.opens, false);
  ReadPaths(in, "paths", true, f.paths);
  ReadPaths(in, "writes", false, f.writes);
}

void ReadFlagOption(FieldReader& in, const json& j, FlagOption& o) {
  in.String("dest", o.dest, true);
  in.String("kind", o.kind, true);
  if (const json* strings = in.Find("flags", true)) {
    if (!strings->is_array()) return in.Fail("field 'flags' is not a list");
    for (const auto& s : *strings) {
      if (!s.is_string()) return in.Fail("field 'flags' holds a non-string");
      o.strings.push_back(s.get<std::string>());
    }
  }
  if (auto v = j.find("value"); v != j.end()) o.value = *v;
  if (auto v = j.find("default"); v != j.end()) o.default_value = *v;
  std::optional<bool> given;
  in.Bool("given", given);
  o.given = given.value_or(false);
  // An option named for a secret (--api-key, --hf-token) never gets past here with its value: tune writes the
  // options to results.json and its cache. The helper hides them already; this holds for any sender.
  bool secret = IsSecretName(o.dest);
  for (const std::string& s : o.strings) secret = secret || IsSecretName(s);
  if (secret) {
    if (!o.value.is_null()) o.value = std::string(kRedacted);
    if (!o.default_value.is_null()) o.default_value = std::string(kRedacted);
  }
}

void ReadFlags(FieldReader& in, HelperMessage& m) {
  in.String("parser", m.flags_parser, false);
  const json* options = in.Find("options", true);
  if (options == nullptr) return;
  if (!options->is_array()) return in.Fail("field 'options' is not a list");
  for (const auto& entry : *options) {
    if (!entry.is_object()) return in.Fail("field 'options' holds a non-object");
    auto option = FlagOptionFromJson(entry);
    if (!option) return in.Fail("options: " + option.error().message);
    m.flag_options.push_back(std::move(*option));
  }
}

}  // namespace

json FlagOptionJson(const FlagOption& o) {
  return {{"dest", o.dest}, {"flags", o.strings}, {"kind", o.kind},
          {"value", o.value}, {"default", o.default_value}, {"given", o.given}};
}

Result<FlagOption> FlagOptionFromJson(const json& j) {
  FlagOption o;
  FieldReader in(j);
  ReadFlagOption(in, j, o);
  if (!in.error().empty()) return Error{in.error()};
  return o;
}

std::string_view MessageTypeName(MessageType type) {
  switch (type) {
    case MessageType::kHello: return "hello";
    case MessageType::kKnob: return "knob";
    case MessageType::kProgress: return "progress";
    case MessageType::kDone: return "done";
    case MessageType::kMetrics: return "metrics";
    case MessageType::kLoader: return "loader";
    case MessageType::kFlops: return "flops";
    case MessageType::kTrace: return "trace";
    case MessageType::kFlags: return "flags";
    case MessageType::kFiles: return "files";
  }
  return "?";
}

Result<HelperMessage> ParseHelperMessage(std::string_view datagram) {
  HelperMessage m;
  m.raw = json::parse(datagram, nullptr, /*allow_exceptions=*/false);
  if (m.raw.is_discarded()) return Error{"not valid JSON"};
  if (!m.raw.is_object()) return Error{"not a JSON object"};
  FieldReader in(m.raw);

  // The header every message carries.
  const json* version = in.Find("v", true);
  if (version != nullptr && *version != kProtocolVersion) {
    return Error{fmt::format("protocol version {} (this saturate speaks {})", version->dump(), kProtocolVersion)};
  }
  std::string type;
  in.String("type", type, true);
  in.String("run", m.run, true);
  const json* pid = in.Find("pid", true);
  if (pid != nullptr && !pid->is_number_integer()) in.Fail("field 'pid' is not an integer");
  in.Count("t", m.t, true);
  if (!in.error().empty()) return Error{in.error()};
  m.pid = pid->get<int64_t>();
  const std::optional<MessageType> known = TypeFromName(type);
  if (!known) return Error{fmt::format("unknown message type '{}'", type)};
  m.type = *known;

  // The fields of each type.
  switch (m.type) {
    case MessageType::kHello: {
      in.String("mode", m.mode, false);
      in.String("python", m.python, false);
      in.String("device", m.device, false);
      in.String("torch", m.torch);
      std::optional<bool> automatic;
      in.Bool("auto", automatic);
      m.automatic = automatic.value_or(false);
      ReadRank(in, m.rank_info);
      break;
    }
    case MessageType::kKnob: {
      in.String("name", m.knob_name, true);
      in.String("source", m.knob_source, false);
      if (const json* v = in.Find("value", false)) m.knob_value = *v;
      if (const json* v = in.Find("default", false)) m.knob_default = *v;
      in.String("error", m.knob_error);
      in.String("flag", m.knob_flag);
      std::optional<bool> automatic;
      in.Bool("auto", automatic);
      m.automatic = automatic.value_or(false);
      break;
    }
    case MessageType::kProgress:
    case MessageType::kDone: ReadProgress(in, m); break;
    case MessageType::kMetrics:
      in.NumberMap("metrics", m.metrics);
      in.Count("steps", m.steps, false);
      in.Count("samples", m.samples, false);
      break;
    case MessageType::kLoader:
      ReadLoader(in, m.loader);
      ReadRank(in, m.rank_info);
      break;
    case MessageType::kFlops: ReadFlops(in, m.flops); break;
    case MessageType::kTrace: ReadTrace(in, m.trace); break;
    case MessageType::kFlags: ReadFlags(in, m); break;
    case MessageType::kFiles: ReadFiles(in, m.files); break;
  }
  if (!in.error().empty()) return Error{in.error()};
  return m;
}

}  // namespace sat::measure
