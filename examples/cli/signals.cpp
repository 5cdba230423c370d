#include "signals.hpp"

#include <csignal>
#include <ctime>
#include <string>

#include "llmsim/core/error.hpp"

namespace llmsim::cli {

namespace {

std::atomic<bool> g_cancel{false};
volatile std::sig_atomic_t g_signal = 0;
static_assert(std::atomic<bool>::is_always_lock_free, "the signal handler needs a lock-free flag");
static_assert(std::atomic<long long>::is_always_lock_free, "the signal handler needs a lock-free time");

struct sigaction g_old_int, g_old_term;

// When the first signal arrived (CLOCK_MONOTONIC, ns). `timeout` forwards a signal to its child and then to the
// child's whole process group, so one Ctrl-C or one `kill` of `timeout` reaches llmsim twice within microseconds:
// a repeat within kRepeatWindowNs is that same request, not the user insisting.
std::atomic<long long> g_first_ns{0};
constexpr long long kRepeatWindowNs = 300'000'000;

long long now_ns() noexcept {  // clock_gettime is async-signal-safe
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<long long>(ts.tv_sec) * 1'000'000'000LL + ts.tv_nsec;
}

extern "C" void on_signal(int sig) {
  if (g_cancel.load(std::memory_order_relaxed)) {
    if (now_ns() - g_first_ns.load(std::memory_order_relaxed) < kRepeatWindowNs) return;  // the same request
    std::signal(sig, SIG_DFL);  // a second signal: stop now, as without the scope
    std::raise(sig);
    return;
  }
  g_first_ns.store(now_ns(), std::memory_order_relaxed);
  g_signal = sig;
  g_cancel.store(true, std::memory_order_relaxed);
}

}  // namespace

CancelScope::CancelScope() {
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;  // no SA_RESTART: a blocking write returns EINTR and checks the flag
  sigaction(SIGINT, &sa, &g_old_int);
  sigaction(SIGTERM, &sa, &g_old_term);
}

CancelScope::~CancelScope() {
  sigaction(SIGINT, &g_old_int, nullptr);
  sigaction(SIGTERM, &g_old_term, nullptr);
}

const std::atomic<bool>* CancelScope::flag() const noexcept { return &g_cancel; }

bool interrupted() noexcept { return g_cancel.load(std::memory_order_relaxed); }

int interrupt_signal() noexcept { return g_signal; }

void throw_interrupted() {
  const int sig = g_signal;
  throw Cancelled(sig == SIGTERM ? "interrupted by SIGTERM" : sig == SIGINT ? "interrupted by SIGINT" : "interrupted");
}

}  // namespace llmsim::cli
