#include "tune/flag_map.h"

#include <fmt/core.h>

#include <algorithm>
#include <cctype>
#include <map>

namespace sat::tune {
namespace {

// Spellings of options that RoleOf does not know as knob names.
const std::map<std::string, KnobRole>& OptionAliases() {
  static const std::map<std::string, KnobRole> aliases = {
      {"j", KnobRole::kWorkers},
      {"n_workers", KnobRole::kWorkers},
      {"nworkers", KnobRole::kWorkers},
      {"loader_workers", KnobRole::kWorkers},
      {"data_workers", KnobRole::kWorkers},
      {"dataloader_num_workers", KnobRole::kWorkers},
      {"b", KnobRole::kBatchSize},
      {"batchsize", KnobRole::kBatchSize},
      {"train_batch_size", KnobRole::kBatchSize},
      {"per_device_train_batch_size", KnobRole::kBatchSize},
      {"pin_mem", KnobRole::kPinMemory},
  };
  return aliases;
}

// "--batch-size" -> "batch_size".
std::string Normal(const std::string& spelling) {
  std::string n = spelling.substr(std::min(spelling.find_first_not_of('-'), spelling.size()));
  for (char& c : n) c = c == '-' ? '_' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return n;
}

KnobRole RoleOfName(const std::string& spelling) {
  const std::string n = Normal(spelling);
  if (auto it = OptionAliases().find(n); it != OptionAliases().end()) return it->second;
  return RoleOf(n);
}

}  // namespace

KnobRole OptionRole(const measure::FlagOption& o) {
  for (const auto& s : o.strings)
    if (KnobRole r = RoleOfName(s); r != KnobRole::kOther) return r;
  return RoleOfName(o.dest);
}

std::optional<KnobValue> ProofValue(const KnobSpec& k, const KnobValue& script) {
  if (k.kind == KnobKind::kChoice) {
    if (k.choices.size() < 2) return std::nullopt;
    auto at = std::find(k.choices.begin(), k.choices.end(), ValueText(script));
    const size_t next = at == k.choices.end() ? 0 : static_cast<size_t>(at - k.choices.begin() + 1) % k.choices.size();
    return KnobValue(k.choices[next]);
  }
  if (!script.is_number_integer()) return std::nullopt;
  const int64_t v = script.get<int64_t>();
  std::vector<int64_t> tries = k.role == KnobRole::kBatchSize ? std::vector<int64_t>{v / 2, v * 2}
                                                               : std::vector<int64_t>{v + 1, v - 1};
  for (int64_t x : tries)
    if (x != v && x >= k.lo && x <= k.hi && x > (k.role == KnobRole::kBatchSize ? 0 : -1)) return KnobValue(x);
  return std::nullopt;
}

std::vector<FlagCandidate> FindCandidates(const std::vector<KnobState>& knobs,
                                          const std::vector<measure::FlagOption>& options,
                                          std::vector<std::string>* notes) {
  std::vector<FlagCandidate> out;
  for (const auto& state : knobs) {
    const KnobSpec& k = state.spec;
    if (!state.exposed || k.delivery != Delivery::kInjected || !state.script_value) continue;
    std::vector<const measure::FlagOption*> fitting;
    for (const auto& o : options) {
      if (OptionRole(o) != k.role) continue;
      const auto v = NormalizeValue(k, o.value);
      if (v && *v == *state.script_value) fitting.push_back(&o);
    }
    if (fitting.size() > 1 && notes) {
      std::string names;
      for (const auto* o : fitting) names += (names.empty() ? "" : ", ") + o->strings.front();
      notes->push_back(fmt::format("{}: options {} all carry the script's value {}, so none is taken as its flag",
                                   k.name, names, ValueText(*state.script_value)));
    }
    if (fitting.size() != 1) continue;
    auto binding = BindingOf(*fitting.front(), *state.script_value);
    auto proof = ProofValue(k, *state.script_value);
    if (!binding || !proof) continue;
    out.push_back({k.name, *binding, *proof});
  }
  return out;
}

std::string Unproven(const FlagCandidate& c, const Trial& t) {
  auto seen = t.knobs_seen.find(c.knob);
  if (seen == t.knobs_seen.end())
    return fmt::format("the run with {} {} reported no training DataLoader ({})", c.flag.option,
                       ValueText(c.proof), FailureText(t));
  if (seen->second != c.proof)
    return fmt::format("with {} {} the script still ran with {}={}", c.flag.option, ValueText(c.proof), c.knob,
                       ValueText(seen->second));
  return "";
}

}  // namespace sat::tune
