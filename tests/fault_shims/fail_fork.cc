// An LD_PRELOAD shim for fault injection: in the process it is loaded into, the first FAIL_FORK_COUNT calls to
// fork() fail with EAGAIN, as they do when RLIMIT_NPROC is reached (root, which runs the tests here, is exempt
// from that limit). Children do not inherit the shim: it removes itself from LD_PRELOAD when loaded.
#include <dlfcn.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>

namespace {

std::atomic<int> g_failures_left{0};

__attribute__((constructor)) void ReadCount() {
  if (const char* n = std::getenv("FAIL_FORK_COUNT")) g_failures_left = std::atoi(n);
  unsetenv("LD_PRELOAD");
}

}  // namespace

extern "C" pid_t fork() {
  if (g_failures_left.fetch_sub(1) > 0) {
    errno = EAGAIN;
    return -1;
  }
  using Fork = pid_t (*)();
  static const Fork real = reinterpret_cast<Fork>(dlsym(RTLD_NEXT, "fork"));
  return real();
}
