// The process's own limit on open descriptors (RLIMIT_NOFILE).
#pragma once

#include <cstddef>

namespace sat {

// Raises the soft limit on open descriptors to the hard limit, once at start: the default soft limit (often 1024)
// is far below what the system allows, and a sweep's runs and the exporter's clients share it. Returns the soft
// limit in force afterwards (the old one when the kernel refused; SIZE_MAX for no limit).
size_t RaiseDescriptorLimit();

// The soft limit on open descriptors now (SIZE_MAX for no limit).
size_t DescriptorLimit();

}  // namespace sat
