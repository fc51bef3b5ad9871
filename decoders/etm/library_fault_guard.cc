#include "decoders/etm/library_fault_guard.h"

#include <csetjmp>
#include <csignal>
#include <mutex>

#include <pthread.h>

namespace ptprof::etm {

namespace {

constexpr int kFaults[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL};

// How many GuardHandlers scopes are open (on all threads), and what each fault signal did
// before the first of them installed the guard's handler: faults outside a guarded call go there.
std::mutex g_mutex;
int g_scopes = 0;
struct sigaction g_before[NSIG];

// The innermost guarded call on this thread; whether library code (not a callback of ours) is
// running in it; whether a fault not ours is being passed on (against a handler that passes it
// back).
thread_local sigjmp_buf* t_jump = nullptr;
thread_local bool t_guarded = false;
thread_local bool t_passing_on = false;

void Default(int signal) {
  struct sigaction fallback = {};
  fallback.sa_handler = SIG_DFL;
  sigemptyset(&fallback.sa_mask);
  sigaction(signal, &fallback, nullptr);
}

void OnFault(int signal, siginfo_t* info, void* context) {
  if (t_guarded && t_jump != nullptr) siglongjmp(*t_jump, signal);
  const struct sigaction& before = g_before[signal];
  if (!t_passing_on) {
    t_passing_on = true;
    if ((before.sa_flags & SA_SIGINFO) != 0 && before.sa_sigaction != nullptr) {
      before.sa_sigaction(signal, info, context);
      t_passing_on = false;
      return;
    }
    if ((before.sa_flags & SA_SIGINFO) == 0 && before.sa_handler != SIG_DFL &&
        before.sa_handler != SIG_IGN) {
      before.sa_handler(signal);
      t_passing_on = false;
      return;
    }
    t_passing_on = false;
  }
  // The default action: put it back and return, so that the faulting instruction runs again and
  // the process ends as it would have without the guard (with a core dump where enabled).
  Default(signal);
}

// Puts the thread's guard state back when a guarded call ends, however it ends.
struct RestoreOnExit {
  sigjmp_buf* jump;
  bool guarded;
  ~RestoreOnExit() {
    t_jump = jump;
    t_guarded = guarded;
  }
};

}  // namespace

GuardHandlers::GuardHandlers() {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (g_scopes++ > 0) return;
  struct sigaction guard = {};
  guard.sa_sigaction = &OnFault;
  guard.sa_flags = SA_SIGINFO | SA_ONSTACK;  // the thread's alternate stack, if it has one
  sigemptyset(&guard.sa_mask);
  for (int signal : kFaults) sigaction(signal, &guard, &g_before[signal]);
}

GuardHandlers::~GuardHandlers() {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (--g_scopes > 0) return;
  for (int signal : kFaults) sigaction(signal, &g_before[signal], nullptr);
}

int CallGuarded(void (*fn)(void*), void* arg) {
  const GuardHandlers installed;
  const RestoreOnExit restore{t_jump, t_guarded};
  sigjmp_buf here;
  // The mask is not saved (that is a system call per guarded call): after a caught fault the
  // signal, blocked while its handler ran, is unblocked here.
  const int signal = sigsetjmp(here, 0);
  if (signal != 0) {
    sigset_t handled;
    sigemptyset(&handled);
    sigaddset(&handled, signal);
    pthread_sigmask(SIG_UNBLOCK, &handled, nullptr);
    return signal;
  }
  t_jump = &here;
  t_guarded = true;
  fn(arg);
  return 0;
}

LibraryCallback::LibraryCallback() : was_guarded_(t_guarded) { t_guarded = false; }
LibraryCallback::~LibraryCallback() { t_guarded = was_guarded_; }

const char* FaultName(int signal) {
  switch (signal) {
    case SIGSEGV: return "SIGSEGV";
    case SIGBUS: return "SIGBUS";
    case SIGFPE: return "SIGFPE";
    case SIGILL: return "SIGILL";
    default: return "a signal";
  }
}

}  // namespace ptprof::etm
