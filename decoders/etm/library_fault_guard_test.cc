#include "decoders/etm/library_fault_guard.h"

#include <csignal>
#include <stdexcept>
#include <thread>

#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

using namespace ptprof::etm;

namespace {

// A page that cannot be read: reading it is a real SIGSEGV, as a stale pointer in a library gives.
volatile const int* Unreadable() {
  static void* page = mmap(nullptr, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return static_cast<volatile const int*>(page);
}

void ReadUnreadable(void* out) { *static_cast<int*>(out) = *Unreadable(); }

void AddOne(void* value) { ++*static_cast<int*>(value); }

void FaultInCallback(void* out) {
  LibraryCallback ours;
  ReadUnreadable(out);
}

void Throw(void*) { throw std::runtime_error("from the library"); }

void ExitSeven(int) { _exit(7); }

// Runs `body` in a child process whose own SIGSEGV handler exits with status 7 (or, with
// `own_handler` false, has the default action); returns the exit status, or 128 + the signal that
// ended the child.
template <typename Body>
int ChildOutcome(Body body, bool own_handler = true) {
  pid_t pid = fork();
  if (pid == 0) {
    struct rlimit no_core = {0, 0};
    setrlimit(RLIMIT_CORE, &no_core);
    std::signal(SIGSEGV, own_handler ? &ExitSeven : SIG_DFL);
    body();
    _exit(0);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
}

}  // namespace

TEST_CASE("a guarded call returns 0 when the function returns") {
  int value = 41;
  CHECK(CallGuarded(&AddOne, &value) == 0);
  CHECK(value == 42);
}

TEST_CASE("a fault inside a guarded call comes back as its signal, every time") {
  REQUIRE(Unreadable() != MAP_FAILED);
  int out = 0;
  CHECK(CallGuarded(&ReadUnreadable, &out) == SIGSEGV);
  CHECK(CallGuarded(&ReadUnreadable, &out) == SIGSEGV);
  CHECK(std::string(FaultName(SIGSEGV)) == "SIGSEGV");
}

TEST_CASE("outside guarded calls the process's own fault handling is back") {
  CHECK(ChildOutcome([] {
          int out = 0;
          if (CallGuarded(&ReadUnreadable, &out) != SIGSEGV) _exit(1);
          ReadUnreadable(&out);
        }) == 7);
  CHECK(ChildOutcome([] {
          GuardHandlers installed;  // the guard's handler passes faults not its own on
          int out = 0;
          ReadUnreadable(&out);
        }) == 7);
  CHECK(ChildOutcome(
            [] {
              GuardHandlers installed;
              int out = 0;
              ReadUnreadable(&out);
            },
            false) == 128 + SIGSEGV);
}

TEST_CASE("a fault in one of our callbacks within a guarded call is not caught") {
  CHECK(ChildOutcome([] {
          int out = 0;
          CallGuarded(&FaultInCallback, &out);
        }) == 7);
  CHECK(ChildOutcome(
            [] {
              int out = 0;
              CallGuarded(&FaultInCallback, &out);
            },
            false) == 128 + SIGSEGV);
}

TEST_CASE("an exception out of a guarded call leaves the guard off") {
  CHECK_THROWS_AS(CallGuarded(&Throw, nullptr), std::runtime_error);
  CHECK(ChildOutcome([] {
          try {
            CallGuarded(&Throw, nullptr);
          } catch (const std::runtime_error&) {
          }
          GuardHandlers installed;
          int out = 0;
          ReadUnreadable(&out);
        }) == 7);
}

TEST_CASE("each thread's guarded calls are its own") {
  GuardHandlers installed;  // one installation for both threads' calls
  int caught = 0;
  std::thread other([&caught] {
    int out = 0;
    caught = CallGuarded(&ReadUnreadable, &out);
  });
  other.join();
  CHECK(caught == SIGSEGV);
  int value = 1;
  CHECK(CallGuarded(&AddOne, &value) == 0);
  CHECK(value == 2);
}
