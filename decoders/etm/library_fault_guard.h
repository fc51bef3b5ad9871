#pragma once
// Running third-party decoder code so that a crash inside it comes back as an error. libopencsd
// 1.3.3 dereferences stale pointers on some damaged ETMv4 trace (tests/fuzz/corpus/etm): without
// a guard a user's corrupted capture would end ptprof with a segmentation fault instead of a gap
// in the decode. CallGuarded catches SIGSEGV, SIGBUS, SIGFPE and SIGILL raised on the calling
// thread while the guarded function runs, outside any LibraryCallback scope, and returns to the
// caller; any other fault keeps its usual effect (the handler installed before, or the default).
// The guard's signal handlers are installed only while a guarded call (or a GuardHandlers scope)
// is under way, on any thread; before and after, the process's handlers are its own.
//
// After a caught fault the library's objects are in an unknown state: the caller should not use
// them again, not even to destroy them (glibc ends the process on an invalid free, which no guard
// catches), but start over with new ones.
// What the library had allocated in the frames the fault left is lost. A stack overflow is not
// caught unless the thread has an alternate signal stack.
namespace ptprof::etm {

// Calls fn(arg); returns 0 when it returned, or the number of the signal when a fault inside the
// library ended it.
int CallGuarded(void (*fn)(void*), void* arg);

// Within a guarded call, marks the code that is ours (the library's callbacks into ptprof): a
// fault there is a bug of ours, and is not caught.
class LibraryCallback {
 public:
  LibraryCallback();
  ~LibraryCallback();
  LibraryCallback(const LibraryCallback&) = delete;
  LibraryCallback& operator=(const LibraryCallback&) = delete;

 private:
  bool was_guarded_;
};

// Keeps the guard's signal handlers installed while alive, so that a run of guarded calls does not
// install and remove them each time (two system calls per signal).
class GuardHandlers {
 public:
  GuardHandlers();
  ~GuardHandlers();
  GuardHandlers(const GuardHandlers&) = delete;
  GuardHandlers& operator=(const GuardHandlers&) = delete;
};

// "SIGSEGV", "SIGBUS", ... for messages.
const char* FaultName(int signal);

}  // namespace ptprof::etm
