// libptprof-swbt.so's life in a traced process (docs/swbt.md): a constructor reads the settings
// from the environment that `ptprof record --backend swbt` set, opens the process's burst file,
// snapshots /proc/self/maps and attaches the main thread; pthread_create is wrapped so that every
// new thread attaches itself before its start routine runs and detaches (a thread-specific-data
// destructor) when it ends; a fork child starts its own file; the destructor (exit) stops every
// thread, flushes their bursts and writes the maps and counters.
#include <dlfcn.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "src/record/swbt/perf_events.h"
#include "src/record/swbt/tracer.h"

namespace ptprof::swbt {

namespace {

constexpr size_t kMaxThreads = 512;

ThreadState* g_slots = nullptr;
pthread_key_t g_exit_key;
bool g_enabled = false;
char g_dir[512];
char g_stem[128];  // "pid<PID>[.<N>]"
TracerCounters g_retired;  // counters of threads that ended
pthread_mutex_t g_retired_lock = PTHREAD_MUTEX_INITIALIZER;
uint64_t g_start_tsc = 0, g_start_ns = 0;
unsigned long g_threads_traced = 0, g_threads_failed = 0;
int g_first_error = 0;

uint64_t MonotonicNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000u + static_cast<uint64_t>(ts.tv_nsec);
}

void Warn(const char* what) {
  char line[256];
  const int n = std::snprintf(line, sizeof line, "ptprof-swbt[%d]: %s\n", getpid(), what);
  if (n > 0) (void)!write(2, line, static_cast<size_t>(n));
}

uint64_t ParseUnsigned(const char* text, uint64_t fallback) {
  if (text == nullptr || *text == '\0') return fallback;
  char* end = nullptr;
  const unsigned long long value = std::strtoull(text, &end, 10);
  return end && *end == '\0' ? value : fallback;
}

// The tracer's own code: the loaded object that holds this function.
void FindOwnCode() {
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&FindOwnCode), &info) == 0) return;
  struct Search {
    const void* base;
    uint64_t begin, end;
  } search{info.dli_fbase, UINT64_MAX, 0};
  dl_iterate_phdr([](dl_phdr_info* object, size_t, void* data) {
    auto* s = static_cast<Search*>(data);
    for (int i = 0; i < object->dlpi_phnum; ++i) {
      const ElfW(Phdr)& ph = object->dlpi_phdr[i];
      if (ph.p_type != PT_LOAD || !(ph.p_flags & PF_X)) continue;
      const uint64_t begin = object->dlpi_addr + ph.p_vaddr;
      if (reinterpret_cast<uint64_t>(s->base) > begin) continue;
      if (object->dlpi_addr != reinterpret_cast<uint64_t>(s->base)) continue;
      if (begin < s->begin) s->begin = begin;
      if (begin + ph.p_memsz > s->end) s->end = begin + ph.p_memsz;
    }
    return 0;
  }, &search);
  if (search.end == 0) return;
  Config().tracer_begin = search.begin;
  Config().tracer_end = search.end;
  Config().placeholder = reinterpret_cast<uint64_t>(&FindOwnCode);
}

void CopyFile(const char* from, const char* to) {
  const int in = open(from, O_RDONLY | O_CLOEXEC);
  if (in < 0) return;
  const int out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (out >= 0) {
    char chunk[8192];
    ssize_t n;
    while ((n = read(in, chunk, sizeof chunk)) > 0) (void)!write(out, chunk, static_cast<size_t>(n));
    close(out);
  }
  close(in);
}

void SnapshotMaps(const char* when) {
  char path[700];
  std::snprintf(path, sizeof path, "%s/maps.%s.%s.txt", g_dir, g_stem, when);
  CopyFile("/proc/self/maps", path);
}

// Opens "<dir>/bursts.pid<PID>[.<N>].swbt" (a new N after each exec) and writes its header.
bool OpenBurstFile() {
  const int pid = getpid();
  for (int n = 0; n < 1000; ++n) {
    if (n == 0) std::snprintf(g_stem, sizeof g_stem, "pid%d", pid);
    else std::snprintf(g_stem, sizeof g_stem, "pid%d.%d", pid, n);
    char path[700];
    std::snprintf(path, sizeof path, "%s/bursts.%s.swbt", g_dir, g_stem);
    const int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) {
      if (errno == EEXIST) continue;
      return false;
    }
    uint8_t header[kSwbtFileHeaderSize] = {};
    std::memcpy(header, kSwbtMagic, 8);
    const uint32_t version = kSwbtVersion, upid = static_cast<uint32_t>(pid), depth = Config().depth;
    std::memcpy(header + 8, &version, 4);
    std::memcpy(header + 12, &upid, 4);
    std::memcpy(header + 16, &depth, 4);
    std::memcpy(header + 24, &Config().period_ns, 8);
    if (write(fd, header, sizeof header) != static_cast<ssize_t>(sizeof header)) {
      close(fd);
      return false;
    }
    Config().output_fd = fd;
    return true;
  }
  return false;
}

ThreadState* TakeSlot() {
  for (size_t i = 0; i < kMaxThreads; ++i) {
    int expected = 0;
    if (g_slots[i].in_use.compare_exchange_strong(expected, 1)) return &g_slots[i];
  }
  return nullptr;
}

void AddCounters(TracerCounters& into, const TracerCounters& from) {
  for (size_t i = 0; i < kCounterCount; ++i) into.value[i] += from.value[i];
}

void AttachCurrentThread() {
  if (!g_enabled) return;
  ThreadState* slot = TakeSlot();
  if (slot == nullptr) {
    __atomic_add_fetch(&g_threads_failed, 1, __ATOMIC_RELAXED);
    return;
  }
  int error = 0;
  if (!AttachThread(*slot, &error)) {
    slot->in_use.store(0);
    if (__atomic_add_fetch(&g_threads_failed, 1, __ATOMIC_RELAXED) == 1) {
      g_first_error = error;
      char text[128];
      std::snprintf(text, sizeof text, "cannot trace thread %d: %s", CurrentTid(), strerror(error));
      Warn(text);
    }
    return;
  }
  __atomic_add_fetch(&g_threads_traced, 1, __ATOMIC_RELAXED);
  pthread_setspecific(g_exit_key, slot);
}

// Thread-specific-data destructor: the thread is ending.
void OnThreadExit(void* data) {
  auto* slot = static_cast<ThreadState*>(data);
  if (slot == nullptr || CurrentThreadState() != slot) return;
  DetachThread(*slot);
  CurrentThreadState() = nullptr;
  pthread_mutex_lock(&g_retired_lock);
  AddCounters(g_retired, slot->counters);
  pthread_mutex_unlock(&g_retired_lock);
  slot->in_use.store(0);
}

void WriteCounters() {
  TracerCounters total = g_retired;
  for (size_t i = 0; i < kMaxThreads; ++i)
    if (g_slots[i].in_use.load()) AddCounters(total, g_slots[i].counters);
  char path[700];
  std::snprintf(path, sizeof path, "%s/counters.%s.json", g_dir, g_stem);
  FILE* out = std::fopen(path, "w");
  if (out == nullptr) return;
  const uint64_t ns = MonotonicNs() - g_start_ns, ticks = ReadTsc() - g_start_tsc;
  std::fprintf(out, "{\"pid\": %d, \"depth\": %u, \"period_ns\": %llu, \"threads_traced\": %lu, "
               "\"threads_failed\": %lu, \"first_error\": %d, \"run_ns\": %llu, \"tsc_per_ns\": %.6f",
               getpid(), Config().depth, static_cast<unsigned long long>(Config().period_ns),
               g_threads_traced, g_threads_failed, g_first_error,
               static_cast<unsigned long long>(ns), ns ? static_cast<double>(ticks) / ns : 0.0);
  for (size_t i = 0; i < kCounterCount; ++i) {
    const char* name = CounterName(static_cast<Counter>(i));
    if (name) std::fprintf(out, ", \"%s\": %llu", name, static_cast<unsigned long long>(total.value[i]));
  }
  std::fprintf(out, ", \"ended\": {");
  for (size_t r = 0; r < static_cast<size_t>(SwbtEndReason::kCount); ++r)
    std::fprintf(out, "%s\"%s\": %llu", r ? ", " : "", SwbtEndReasonName(static_cast<SwbtEndReason>(r)),
                 static_cast<unsigned long long>(total.value[kEndedFirst + r]));
  std::fprintf(out, "}}\n");
  std::fclose(out);
}

// fork child: the inherited fds are the parent's events; start over with this process's own.
void OnForkChild() {
  if (!g_enabled) return;
  ThreadState* mine = CurrentThreadState();
  for (size_t i = 0; i < kMaxThreads; ++i) {
    ThreadState& slot = g_slots[i];
    if (!slot.in_use.load()) continue;
    slot.attached.store(0);
    CloseFd(slot.sampler_fd);
    CloseFd(slot.breakpoint_fd);
    slot.sampler_fd = slot.breakpoint_fd = -1;
    slot.active = false;
    slot.used = 0;
    slot.in_use.store(0);
  }
  CurrentThreadState() = nullptr;
  (void)mine;
  close(Config().output_fd);
  g_retired = TracerCounters{};
  g_threads_traced = g_threads_failed = 0;
  g_start_tsc = ReadTsc();
  g_start_ns = MonotonicNs();
  if (!OpenBurstFile()) {
    g_enabled = false;
    return;
  }
  SnapshotMaps("start");
  AttachCurrentThread();
}

struct ThreadStart {
  void* (*routine)(void*);
  void* arg;
};

void* TracedThreadMain(void* data) {
  ThreadStart start = *static_cast<ThreadStart*>(data);
  std::free(data);
  AttachCurrentThread();
  return start.routine(start.arg);
}

__attribute__((constructor)) void StartTracer() {
  const char* dir = getenv("PTPROF_SWBT_DIR");
  if (dir == nullptr || *dir == '\0' || std::strlen(dir) >= sizeof g_dir - 64) return;
  std::strcpy(g_dir, dir);
  TracerConfig& c = Config();
  c.depth = static_cast<uint32_t>(ParseUnsigned(getenv("PTPROF_SWBT_DEPTH"), 16));
  if (c.depth == 0 || c.depth > kSwbtMaxDepth) c.depth = 16;
  c.period_ns = ParseUnsigned(getenv("PTPROF_SWBT_PERIOD_NS"), 1000000);
  if (c.period_ns < 50000) c.period_ns = 50000;  // FACTS: shorter periods livelock the process
  c.signal = static_cast<int>(ParseUnsigned(getenv("PTPROF_SWBT_SIGNAL"), SIGRTMAX - 2));
  g_start_tsc = ReadTsc();
  g_start_ns = MonotonicNs();
  FindOwnCode();
  if (c.tracer_end == 0) return Warn("cannot find the tracer's own code; not tracing");
  void* slots = mmap(nullptr, kMaxThreads * sizeof(ThreadState), PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (slots == MAP_FAILED) return Warn("cannot allocate the thread slots; not tracing");
  g_slots = static_cast<ThreadState*>(slots);  // zero pages: every slot free
  InitDecoder();
  if (!OpenBurstFile()) return Warn("cannot create the burst file; not tracing");
  if (!InstallSignalHandler()) return Warn("cannot install the signal handler; not tracing");
  pthread_key_create(&g_exit_key, OnThreadExit);
  pthread_atfork(nullptr, nullptr, OnForkChild);
  SnapshotMaps("start");
  g_enabled = true;
  AttachCurrentThread();
}

// Stops tracing the process for good: at exit, and before an exec replaces the image (the new
// image starts the tracer anew; if the exec fails, the process goes on untraced).
void StopTracer() {
  if (!g_enabled) return;
  g_enabled = false;
  for (size_t i = 0; i < kMaxThreads; ++i)
    if (g_slots[i].in_use.load() && g_slots[i].sampler_fd >= 0) DetachThread(g_slots[i]);
  SnapshotMaps("exit");
  WriteCounters();
}

__attribute__((destructor)) void StopAtExit() { StopTracer(); }

}  // namespace

}  // namespace ptprof::swbt

// exec wrappers: the buffered bursts, the maps and the counters of this image are written before
// the exec replaces it (the destructor does not run on exec).
#define PTPROF_SWBT_EXPORT extern "C" __attribute__((visibility("default")))

namespace {
template <class Fn>
Fn Next(const char* name) {
  return reinterpret_cast<Fn>(dlsym(RTLD_NEXT, name));
}
constexpr int kMaxExecArgs = 4096;
}  // namespace

PTPROF_SWBT_EXPORT int execve(const char* path, char* const argv[], char* const envp[]) {
  static auto real = Next<int (*)(const char*, char* const*, char* const*)>("execve");
  ptprof::swbt::StopTracer();
  return real(path, argv, envp);
}

PTPROF_SWBT_EXPORT int execv(const char* path, char* const argv[]) {
  static auto real = Next<int (*)(const char*, char* const*)>("execv");
  ptprof::swbt::StopTracer();
  return real(path, argv);
}

PTPROF_SWBT_EXPORT int execvp(const char* file, char* const argv[]) {
  static auto real = Next<int (*)(const char*, char* const*)>("execvp");
  ptprof::swbt::StopTracer();
  return real(file, argv);
}

PTPROF_SWBT_EXPORT int execvpe(const char* file, char* const argv[], char* const envp[]) {
  static auto real = Next<int (*)(const char*, char* const*, char* const*)>("execvpe");
  ptprof::swbt::StopTracer();
  return real(file, argv, envp);
}

// execl, execlp, execle: the arguments into an array, then the v-variant.
#define PTPROF_SWBT_COLLECT_ARGS(first, argv, ap)                          \
  const char* argv[kMaxExecArgs];                                          \
  int argc = 0;                                                            \
  argv[argc++] = first;                                                    \
  va_list ap;                                                              \
  va_start(ap, arg);                                                       \
  while (argv[argc - 1] != nullptr && argc < kMaxExecArgs)                 \
    argv[argc++] = va_arg(ap, const char*);

PTPROF_SWBT_EXPORT int execl(const char* path, const char* arg, ...) {
  PTPROF_SWBT_COLLECT_ARGS(arg, argv, ap)
  va_end(ap);
  if (argv[argc - 1] != nullptr) return errno = E2BIG, -1;
  return execv(path, const_cast<char* const*>(argv));
}

PTPROF_SWBT_EXPORT int execlp(const char* file, const char* arg, ...) {
  PTPROF_SWBT_COLLECT_ARGS(arg, argv, ap)
  va_end(ap);
  if (argv[argc - 1] != nullptr) return errno = E2BIG, -1;
  return execvp(file, const_cast<char* const*>(argv));
}

PTPROF_SWBT_EXPORT int execle(const char* path, const char* arg, ...) {
  PTPROF_SWBT_COLLECT_ARGS(arg, argv, ap)
  char* const* envp = va_arg(ap, char* const*);
  va_end(ap);
  if (argv[argc - 1] != nullptr) return errno = E2BIG, -1;
  return execve(path, const_cast<char* const*>(argv), envp);
}

extern "C" __attribute__((visibility("default"))) int pthread_create(pthread_t* thread, const pthread_attr_t* attr,
                              void* (*routine)(void*), void* arg) {
  using Create = int (*)(pthread_t*, const pthread_attr_t*, void* (*)(void*), void*);
  static Create real = reinterpret_cast<Create>(dlsym(RTLD_NEXT, "pthread_create"));
  if (real == nullptr) return EAGAIN;
  auto* start = static_cast<ptprof::swbt::ThreadStart*>(std::malloc(sizeof(ptprof::swbt::ThreadStart)));
  if (start == nullptr) return real(thread, attr, routine, arg);
  start->routine = routine;
  start->arg = arg;
  const int rc = real(thread, attr, ptprof::swbt::TracedThreadMain, start);
  if (rc != 0) std::free(start);
  return rc;
}
