#include "tune/flag.h"

#include <algorithm>

namespace sat::tune {
namespace {

using nlohmann::json;

bool IsOn(const json& v) {
  if (v.is_boolean()) return v.get<bool>();
  if (v.is_number()) return v.get<double>() != 0;
  if (!v.is_string()) return false;
  const std::string s = v.get<std::string>();
  return s == "on" || s == "true" || s == "yes" || s == "1";
}

std::string Text(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_boolean()) return v.get<bool>() ? "on" : "off";
  return v.dump();
}

bool IsShort(const std::string& s) { return s.size() == 2 && s[0] == '-' && s[1] != '-'; }

bool Negative(const std::string& s) { return s.rfind("--no-", 0) == 0; }

// The spelling `word` uses: an exact one, `--x=V`, or a one-letter `-jV`; nullptr when none.
const std::string* SpellingIn(const std::string& word, const std::vector<std::string>& strings, bool with_value) {
  for (const auto& s : strings) {
    if (word == s) return &s;
    if (!with_value) continue;
    if (word.rfind(s + "=", 0) == 0) return &s;
    if (IsShort(s) && word.size() > 2 && word.rfind(s, 0) == 0) return &s;
  }
  return nullptr;
}

// Where added words go: before a lone "--", else at the end.
size_t AddAt(const std::vector<std::string>& argv) {
  auto dashes = std::find(argv.begin(), argv.end(), "--");
  return static_cast<size_t>(dashes - argv.begin());
}

}  // namespace

std::string FlagBinding::Describe() const {
  switch (form) {
    case FlagForm::kValue: return option + " N";
    case FlagForm::kStoreTrue: return option + " (present: on)";
    case FlagForm::kStoreFalse: return option + " (present: off)";
    case FlagForm::kBooleanOptional: {
      std::string text;
      for (const auto& s : strings) text += (text.empty() ? "" : "/") + s;
      return text;
    }
  }
  return option;
}

std::optional<FlagBinding> BindingOf(const measure::FlagOption& o, const json& script_value) {
  FlagBinding b;
  if (o.kind == "value") b.form = FlagForm::kValue;
  else if (o.kind == "store_true") b.form = FlagForm::kStoreTrue;
  else if (o.kind == "store_false") b.form = FlagForm::kStoreFalse;
  else if (o.kind == "boolean_optional") b.form = FlagForm::kBooleanOptional;
  else return std::nullopt;
  if (o.strings.empty()) return std::nullopt;
  b.strings = o.strings;
  auto long_one = std::find_if(o.strings.begin(), o.strings.end(),
                               [](const std::string& s) { return s.rfind("--", 0) == 0 && !Negative(s); });
  b.option = long_one != o.strings.end() ? *long_one : o.strings.front();
  b.script_value = script_value;
  return b;
}

FlagBinding NamedBinding(const std::string& flag, const std::vector<measure::FlagOption>& options,
                         const json& script_value) {
  for (const auto& o : options) {
    if (std::find(o.strings.begin(), o.strings.end(), flag) == o.strings.end()) continue;
    if (auto b = BindingOf(o, script_value)) {
      b->option = flag;
      return *b;
    }
  }
  return FlagBinding{flag, {flag}, FlagForm::kValue, script_value};
}

std::vector<std::string> SetFlag(const std::vector<std::string>& argv, const FlagBinding& flag, const json& value) {
  const bool own = !flag.script_value.is_null() && Text(value) == Text(flag.script_value);
  const size_t end = AddAt(argv);
  std::vector<std::string> out;
  bool present = false;
  if (flag.form == FlagForm::kValue) {
    const std::string text = Text(value);
    for (size_t i = 0; i < argv.size(); ++i) {
      const std::string* s = i < end ? SpellingIn(argv[i], flag.strings, true) : nullptr;
      if (s == nullptr) {
        out.push_back(argv[i]);
        continue;
      }
      present = true;
      if (argv[i] == *s) {
        out.push_back(*s);
        out.push_back(text);
        ++i;  // its old value
      } else if (argv[i].rfind(*s + "=", 0) == 0) {
        out.push_back(*s + "=" + text);
      } else {
        out.push_back(*s + text);
      }
    }
    if (!present && !own) {
      out.insert(out.begin() + static_cast<std::ptrdiff_t>(end), {flag.option, text});
    }
    return out;
  }
  // Switches: take every spelling out, then put the one wanted back (where the first one was).
  size_t first = end;
  for (size_t i = 0; i < argv.size(); ++i) {
    if (i < end && SpellingIn(argv[i], flag.strings, false) != nullptr) {
      if (!present) first = out.size();
      present = true;
      continue;
    }
    out.push_back(argv[i]);
  }
  if (!present && own) return argv;
  const bool on = IsOn(value);
  std::string word;
  if (flag.form == FlagForm::kStoreTrue && on) word = flag.option;
  if (flag.form == FlagForm::kStoreFalse && !on) word = flag.option;
  if (flag.form == FlagForm::kBooleanOptional) {
    for (const auto& s : flag.strings)
      if (Negative(s) != on && s.rfind("--", 0) == 0) word = s;
  }
  if (!word.empty()) {
    const size_t at = present ? first : out.size() - (argv.size() - end);
    out.insert(out.begin() + static_cast<std::ptrdiff_t>(at), word);
  }
  return out;
}

}  // namespace sat::tune
