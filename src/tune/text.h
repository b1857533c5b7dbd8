// Numbers as people read them in tune's sentences, tables and charts. Pure functions.
#pragma once

#include <string>

namespace sat::tune {

// 1234.5 -> "1,235"; below 100 one decimal ("12.5"); below 10 two ("1.25").
std::string Number(double v);
// "1,235 samples/s".
std::string Rate(double samples_per_s);
// Bytes in binary units: "512 MiB", "2.4 GiB".
std::string Bytes(double bytes);
// A ratio as "1.6×" (two digits below 10).
std::string Times(double ratio);
// A share as a percentage: 0.034 -> "3%", 0.0042 -> "0.4%".
std::string Percent(double share);

}  // namespace sat::tune
