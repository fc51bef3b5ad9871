#pragma once
// Worker threads, for pools that can do without some of them: how many the system lets start
// (a limit on threads or on memory refuses the rest), and what their work throws (out of memory),
// kept for the thread that waits on it. Every decoding pool starts its threads and runs its work
// through these, so that a refusal never ends the process.
#include <exception>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

namespace ptprof {

struct ThreadsStarted {
  unsigned count = 0;          // threads started
  std::exception_ptr refused;  // the system's refusal of the next one (null: all started)
  std::string why;             // its message
};

// Starts up to `count` threads in `threads`, thread i running work(i) (a copy of `work`), and
// stops at the first one the system refuses.
template <typename Work>
ThreadsStarted StartThreads(std::vector<std::thread>& threads, unsigned count, const Work& work) {
  ThreadsStarted started;
  for (unsigned i = 0; i < count; ++i) {
    try {
      threads.emplace_back([work, i] { work(i); });
    } catch (const std::system_error& e) {
      started.refused = std::current_exception();
      started.why = e.what();
      break;
    }
    ++started.count;
  }
  return started;
}

// What f() threw, or null.
template <typename F>
std::exception_ptr Caught(const F& f) {
  try {
    f();
  } catch (...) {
    return std::current_exception();
  }
  return nullptr;
}

}  // namespace ptprof
