#pragma once
// The tracer's per-thread algorithm (Break Dancing, algorithm 1) and its process-wide settings:
// the signal handler that starts a burst on a sample and advances it on each breakpoint, and the
// attach/detach of a thread. preload.cc wires it into a process (constructor, pthread_create,
// fork, exit).
#include <cstdint>

#include "src/record/swbt/thread_state.h"

namespace ptprof::swbt {

struct TracerConfig {
  uint32_t depth = 16;
  uint64_t period_ns = 1000000;
  int signal = 0;
  int output_fd = -1;             // the burst file, O_APPEND
  uint64_t tracer_begin = 0;      // [begin, end): the tracer's own code, never traced
  uint64_t tracer_end = 0;
  uint64_t placeholder = 0;       // a code address for a breakpoint that is not armed
  uint64_t flush_interval_ns = 50000000;
};

TracerConfig& Config();

// Zydis decoder shared read-only by every thread (initialised once before any attach).
void InitDecoder();

// Installs the signal handler (once).
bool InstallSignalHandler();

// Sets up sampling for the calling thread in `state` (a free slot); false with `error` = -errno.
bool AttachThread(ThreadState& state, int* error);

// Stops tracing `state`'s thread (the calling thread or, at exit, any): disables its events, ends
// its burst (thread_exit), flushes its buffer, closes its fds.
void DetachThread(ThreadState& state);

// Writes the buffered bursts of `state` to the output file.
void FlushBursts(ThreadState& state);

// The calling thread's slot (initial-exec TLS: safe in a signal handler).
ThreadState*& CurrentThreadState();

}  // namespace ptprof::swbt
