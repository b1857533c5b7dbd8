// This machine's name, as reports and lock files give it.
#pragma once

#include <string>

namespace sat {

// gethostname(2); "?" when it fails.
std::string HostName();

}  // namespace sat
