// What the saturate executable defines itself so that its wheel's glibc floor (the newest GLIBC_x.y among its
// symbols, which scripts/pack-wheel puts in the wheel's tag) is lower than the build machine's glibc 2.36:
// docs/design.md, "Installing". Part of the executable itself, not of a module's library, so that the static
// libstdc++ linked after it binds to these definitions rather than to glibc's versioned symbols.
#include <sys/random.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>

// arc4random, new in glibc 2.36, which the static libstdc++'s std::random_device calls when built against 2.36:
// the same kernel randomness through getrandom(2) (glibc 2.25). Like glibc's, it aborts when the kernel gives none.
// Left at 2.35 by this: libgcc's unwinder (linked statically) calls _dl_find_object, which cannot be replaced.
// Exported, as an executable's definition of a libc name is: a library saturate loads (NVML) that calls arc4random
// gets this one, which means the same.
extern "C" uint32_t arc4random() noexcept {
  uint32_t value;
  for (;;) {
    ssize_t got = getrandom(&value, sizeof value, 0);
    if (got == static_cast<ssize_t>(sizeof value)) return value;
    if (got < 0 && errno != EINTR) std::abort();
  }
}
