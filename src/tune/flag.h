// A command-line option of the training script that sets a knob: how a value is written into the command. The
// recommendation of a knob delivered so is the user's own command line with that flag changed or added, which
// runs without saturate. Pure functions.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "measure/helper_message.h"

namespace sat::tune {

// How the option takes its value (argparse's action).
enum class FlagForm {
  kValue,            // --x V (or --x=V, or -jV for a one-letter option)
  kStoreTrue,        // present: on; absent: off
  kStoreFalse,       // present: off; absent: on
  kBooleanOptional,  // --x: on; --no-x: off
};

struct FlagBinding {
  std::string option;                // the spelling written into commands: the first long one ("--batch-size")
  std::vector<std::string> strings;  // every spelling the script's parser accepts, `option` included
  FlagForm form = FlagForm::kValue;
  // The knob value the script had from the command as given (null: unknown). Writing this value changes no
  // command that does not already carry the flag.
  nlohmann::json script_value;

  // "--workers N", "--pin-memory (on) / absent (off)", "--amp/--no-amp".
  std::string Describe() const;
};

// The binding for a parsed option, with `script_value` (already in knob terms); nullopt for an option no knob
// value can be written into.
std::optional<FlagBinding> BindingOf(const measure::FlagOption& option, const nlohmann::json& script_value);
// A binding named by the script (saturate.knob(..., flag="--workers")): its form from the parsed `options` when
// one of them has that spelling, else kValue.
FlagBinding NamedBinding(const std::string& flag, const std::vector<measure::FlagOption>& options,
                         const nlohmann::json& script_value);

// The command with the flag set to `value` (an integer, or a choice such as "on", "off", "bf16"):
//   kValue: every `--x V`, `--x=V`, `-jV` already there gets the new value; else `--x V` is added;
//   kStoreTrue / kStoreFalse: the option is added or every spelling of it removed;
//   kBooleanOptional: `--x` or `--no-x`, replacing either.
// Nothing is added when `value` is the script's own value and the command does not carry the flag. Words are
// added at the end, before a lone `--` when there is one.
std::vector<std::string> SetFlag(const std::vector<std::string>& argv, const FlagBinding& flag,
                                 const nlohmann::json& value);

}  // namespace sat::tune
