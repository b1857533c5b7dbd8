#include "run/interrupt.h"

#include <atomic>
#include <csignal>
#include <mutex>

namespace sat::run {
namespace {

// Lock-free atomics: the only state a signal handler may touch.
std::atomic<int> g_count{0};
std::atomic<int> g_first_signal{0};
static_assert(std::atomic<int>::is_always_lock_free);

extern "C" void OnInterrupt(int sig) {
  int none = 0;
  g_first_signal.compare_exchange_strong(none, sig);
  g_count.fetch_add(1);
}

}  // namespace

void InstallInterruptHandlers() {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction sa = {};
    sa.sa_handler = OnInterrupt;
    sigemptyset(&sa.sa_mask);
    // Restart interrupted system calls so unrelated blocking code keeps working; waiters poll the flag.
    sa.sa_flags = SA_RESTART;
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
      // `nohup saturate sweep ... &` ignores SIGHUP so that the sweep outlives the terminal; that stays so.
      struct sigaction old = {};
      if (sig == SIGHUP && sigaction(sig, nullptr, &old) == 0 && old.sa_handler == SIG_IGN) continue;
      sigaction(sig, &sa, nullptr);
    }
  });
}

bool Interrupted() { return g_count.load() > 0; }

int InterruptCount() { return g_count.load(); }

int InterruptSignal() { return g_first_signal.load(); }

void ClearInterrupt() {
  g_count.store(0);
  g_first_signal.store(0);
}

}  // namespace sat::run
