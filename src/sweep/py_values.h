// Values as W&B's Python sees them. Sweep files are read by PyYAML, so plain YAML scalars follow YAML 1.1
// (ResolvePlainScalar), and W&B's agent writes values with Python's str() and json.dumps(). Rendering them the
// same way (PyStr, PyJsonDumps) makes `--lr=0.01`, `--flag=True` and `--layers=[64, 32]` reach the training script
// exactly as under `wandb agent`. Values are nlohmann::json (null, bool, integer, float, string, array, object).
// Pure functions.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace sat::sweep {

// The type a plain (unquoted) YAML scalar gets from PyYAML's YAML 1.1 resolver: null ("", "~", "null"), bool
// ("true", "yes", "on", "off", ...), int ("42", "1_000", "0x1f", "0b101", and "017" is octal), float
// ("0.1", "1.", ".5", "1.0e-3"; an exponent needs a dot and a sign: "1e-3" stays a string, as in PyYAML),
// sexagesimal ints ("1:30" is 90), otherwise the string itself (timestamps too, which read the same). An int
// that does not fit in 64 bits stays a string.
nlohmann::json ResolvePlainScalar(std::string_view text);

// Python's repr() of a float: shortest round-trip digits, "1.0", "0.0001", "1e-05", "1e+16", "inf", "nan".
std::string PyFloatRepr(double v);

// Python's str() of the value as the W&B agent formats it into `--name=value`: "0.01", "32", "True", "None",
// "adam", "[64, 'relu']", "{'a': 1}" (object keys in sorted order).
std::string PyStr(const nlohmann::json& v);

// Python's json.dumps() with its defaults: ", " and ": " separators, ensure_ascii (\uXXXX escapes).
std::string PyJsonDumps(const nlohmann::json& v);

}  // namespace sat::sweep
