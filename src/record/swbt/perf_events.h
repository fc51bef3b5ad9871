#pragma once
// The kernel interface of the tracer, as raw system calls so that the signal handlers never enter
// libc (a breakpoint the tracer placed in libc must not fire inside the tracer): perf events for
// task-clock sampling and hardware execute breakpoints, each delivering a real-time signal to its
// thread; reads of the process's own memory that fail instead of faulting.
#include <linux/perf_event.h>

#include <cstddef>
#include <cstdint>

namespace ptprof::swbt {

long RawSyscall(long number, long a1 = 0, long a2 = 0, long a3 = 0, long a4 = 0, long a5 = 0,
                long a6 = 0);

// Opens a disabled task-clock sampling event on thread `tid` that sends `signal` (with si_fd) to
// that thread when `period_ns` of its CPU time passed. Returns the fd or -errno.
int OpenSampler(int tid, uint64_t period_ns, int signal);

// Opens a disabled execute breakpoint on thread `tid` (initially at `placeholder`), sending
// `signal` when hit. `attr` keeps the attributes: PERF_EVENT_IOC_MODIFY_ATTRIBUTES wants them
// unchanged except for the address. Returns the fd or -errno.
int OpenBreakpoint(int tid, uint64_t placeholder, int signal, perf_event_attr* attr);

// Moves the breakpoint to `address` and enables it. False when the kernel refused.
bool ArmBreakpoint(int fd, perf_event_attr* attr, uint64_t address);

// Enables the sampler for exactly one more overflow (it disables itself after signalling).
bool ArmOnce(int fd);
void DisableEvent(int fd);
void CloseFd(int fd);

// Reads the calling process's memory; returns the bytes read (0 when unmapped). `context` unused.
size_t ReadOwnMemory(void* context, uint64_t address, void* out, size_t size);

int CurrentTid();
uint64_t ReadTsc();

}  // namespace ptprof::swbt
