#include "src/record/swbt/tracer.h"

#include <signal.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>

#include <cerrno>
#include <cstring>

#include "src/record/swbt/perf_events.h"

extern "C" {
// glibc >= 2.35: where the thread's struct rseq is, relative to the thread pointer.
extern const ptrdiff_t __rseq_offset __attribute__((weak));
extern const unsigned int __rseq_size __attribute__((weak));
}

namespace ptprof::swbt {

namespace {

ZydisDecoder g_decoder;

uint64_t MonotonicNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000u + static_cast<uint64_t>(ts.tv_nsec);
}

bool InTracer(uint64_t address) {
  const TracerConfig& c = Config();
  return address >= c.tracer_begin && address < c.tracer_end;
}

RegisterFile RegistersOf(const ucontext_t* uc) {
  const greg_t* g = uc->uc_mcontext.gregs;
  RegisterFile r;
  r.gpr[0] = g[REG_RAX]; r.gpr[1] = g[REG_RCX]; r.gpr[2] = g[REG_RDX]; r.gpr[3] = g[REG_RBX];
  r.gpr[4] = g[REG_RSP]; r.gpr[5] = g[REG_RBP]; r.gpr[6] = g[REG_RSI]; r.gpr[7] = g[REG_RDI];
  r.gpr[8] = g[REG_R8]; r.gpr[9] = g[REG_R9]; r.gpr[10] = g[REG_R10]; r.gpr[11] = g[REG_R11];
  r.gpr[12] = g[REG_R12]; r.gpr[13] = g[REG_R13]; r.gpr[14] = g[REG_R14]; r.gpr[15] = g[REG_R15];
  r.gpr[kRip] = g[REG_RIP];
  r.rflags = g[REG_EFL];
  return r;
}

// True when `address` lies in the rseq critical section the thread is in now (the kernel would
// abort it on the breakpoint's signal and the breakpoint's branch would never complete).
bool InActiveRseq(uint64_t address) {
  if (&__rseq_offset == nullptr || &__rseq_size == nullptr || __rseq_size < 32) return false;
  uint64_t tp;
  asm("mov %%fs:0, %0" : "=r"(tp));
  uint64_t cs_pointer = 0;
  if (ReadOwnMemory(nullptr, tp + __rseq_offset + 8, &cs_pointer, 8) != 8 || cs_pointer == 0)
    return false;
  struct {
    uint32_t version, flags;
    uint64_t start_ip, post_commit_offset, abort_ip;
  } cs;
  if (ReadOwnMemory(nullptr, cs_pointer, &cs, sizeof cs) != sizeof cs) return false;
  return address >= cs.start_ip && address - cs.start_ip < cs.post_commit_offset;
}

void Store(uint8_t* at, const void* value, size_t size) { std::memcpy(at, value, size); }

// Ends the burst in progress: encodes it into the buffer and counts why it ended.
void EndBurst(ThreadState& t, SwbtEndReason reason) {
  if (!t.active) return;
  t.active = false;
  if (t.breakpoint_enabled) {
    const uint64_t start = ReadTsc();
    DisableEvent(t.breakpoint_fd);
    t.breakpoint_enabled = false;
    t.counters.value[kTicksBreakpointArm] += ReadTsc() - start;
  }
  ++t.counters.value[kEndedFirst + static_cast<size_t>(reason)];
  const size_t size = kSwbtBurstHeaderSize + t.count * kSwbtBranchSize;
  if (t.used + size > sizeof t.buffer) FlushBursts(t);
  uint8_t* p = t.buffer + t.used;
  const uint32_t magic = kSwbtBurstMagic, tid = static_cast<uint32_t>(t.tid), zero = 0;
  const uint16_t count = static_cast<uint16_t>(t.count), why = static_cast<uint16_t>(reason);
  Store(p, &magic, 4);
  Store(p + 4, &count, 2);
  Store(p + 6, &why, 2);
  Store(p + 8, &tid, 4);
  Store(p + 12, &zero, 4);
  Store(p + 16, &t.time_ns, 8);
  Store(p + 24, &t.start_pc, 8);
  Store(p + 32, t.branches, t.count * kSwbtBranchSize);
  t.used += size;
  t.counters.value[kBranchesRecorded] += t.count;
  // Room for the next burst, and a bounded loss if the process dies without exit handlers.
  const size_t max_size = kSwbtBurstHeaderSize + Config().depth * kSwbtBranchSize;
  if (t.used + max_size > sizeof t.buffer || t.time_ns - t.last_flush_ns > Config().flush_interval_ns)
    FlushBursts(t);
}

// Records a taken branch; true when the burst is full (and ended).
bool Record(ThreadState& t, uint64_t from, uint64_t to) {
  t.branches[2 * t.count] = from;
  t.branches[2 * t.count + 1] = to;
  if (++t.count < Config().depth) return false;
  EndBurst(t, SwbtEndReason::kComplete);
  return true;
}

const Run& FindRun(ThreadState& t, uint64_t pc) {
  if (const Run* run = t.cache.Find(pc)) {
    ++t.counters.value[kDecodeCacheHits];
    return *run;
  }
  const uint64_t start = ReadTsc();
  const Run& run = t.cache.Put(ScanRun(g_decoder, pc, ReadOwnMemory, nullptr));
  ++t.counters.value[kDecodeCacheMisses];
  t.counters.value[kInsnsDecoded] += run.insns;
  t.counters.value[kTicksDecode] += ReadTsc() - start;
  return run;
}

// FindNextUnresolvedBranch of algorithm 1: follows statically resolved branches from `pc`
// (recording them) and arms the breakpoint on the first branch that needs one, or ends the burst.
void ContinueFrom(ThreadState& t, uint64_t pc, uint64_t rsp, bool rsp_known) {
  for (;;) {
    const Run& run = FindRun(t, pc);
    if (run.end != RunEnd::kBranch) return EndBurst(t, SwbtEndReason::kDecodeFailure);
    const BranchDesc& b = run.branch;
    if (b.kind == BranchKind::kSyscall) return EndBurst(t, SwbtEndReason::kSyscall);
    if (b.kind == BranchKind::kUnsupported) return EndBurst(t, SwbtEndReason::kUnsupported);
    rsp += static_cast<uint64_t>(static_cast<int64_t>(run.rsp_delta));
    rsp_known = rsp_known && run.rsp_known;
    if (b.IsStatic()) {
      ++t.counters.value[kStaticBranches];
      if (Record(t, b.address, b.target)) return;
      if (b.kind == BranchKind::kDirectCall) rsp -= 8;
      pc = b.target;
      continue;
    }
    if (InTracer(b.address)) return EndBurst(t, SwbtEndReason::kBreakpointFailed);
    if (InActiveRseq(b.address)) return EndBurst(t, SwbtEndReason::kRseq);
    t.armed = b;
    t.rsp_known = rsp_known;
    t.expected_rsp = rsp;
    const uint64_t start = ReadTsc();
    const bool armed = ArmBreakpoint(t.breakpoint_fd, &t.breakpoint_attr, b.address);
    t.breakpoint_enabled = armed;
    t.counters.value[kTicksBreakpointArm] += ReadTsc() - start;
    if (!armed) return EndBurst(t, SwbtEndReason::kBreakpointFailed);
    ++t.counters.value[kBreakpointsSet];
    return;
  }
}

void RearmSampler(ThreadState& t) {
  const uint64_t start = ReadTsc();
  ArmOnce(t.sampler_fd);
  t.counters.value[kTicksSamplerArm] += ReadTsc() - start;
}

void OnSample(ThreadState& t, const RegisterFile& regs) {
  ++t.counters.value[kSamples];
  if (t.active) {
    if (t.progress != t.progress_at_sample) {  // still advancing: let it finish
      t.progress_at_sample = t.progress;
      ++t.counters.value[kSamplesInBurst];
      return RearmSampler(t);
    }
    EndBurst(t, SwbtEndReason::kStalled);
  }
  const uint64_t pc = regs.gpr[kRip];
  if (InTracer(pc)) {
    ++t.counters.value[kSamplesSkipped];
    return RearmSampler(t);
  }
  ++t.counters.value[kBursts];
  t.active = true;
  t.count = 0;
  t.progress = t.progress_at_sample = 0;
  t.start_pc = pc;
  t.time_ns = MonotonicNs();
  if (InActiveRseq(pc)) {
    EndBurst(t, SwbtEndReason::kRseq);
  } else {
    ContinueFrom(t, pc, regs.gpr[kRsp], true);
  }
  RearmSampler(t);
}

void OnBreakpoint(ThreadState& t, const RegisterFile& regs) {
  ++t.counters.value[kBreakpointHits];
  if (!t.active) return;  // a hit of an ended burst's breakpoint, delivered late
  const uint64_t pc = regs.gpr[kRip];
  if (pc != t.armed.address)
    return EndBurst(t, InActiveRseq(t.armed.address) ? SwbtEndReason::kRseq
                                                     : SwbtEndReason::kUnexpectedFrame);
  uint64_t rsp = regs.gpr[kRsp];
  if (t.rsp_known && rsp != t.expected_rsp) {
    // Hit from another frame (a signal handler of the program): the burst's own branch is still
    // ahead; the breakpoint is spent, so the burst ends here.
    return EndBurst(t, SwbtEndReason::kStackMismatch);
  }
  ++t.progress;
  const BranchOutcome outcome = EvaluateBranch(t.armed, regs, ReadOwnMemory, nullptr);
  if (!outcome.ok) return EndBurst(t, SwbtEndReason::kBadTarget);
  ++t.counters.value[kDynamicBranches];
  if (outcome.taken) {
    ++t.counters.value[kDynamicTaken];
    if (Record(t, t.armed.address, outcome.next)) return;
  }
  if (t.armed.kind == BranchKind::kIndirectCall) rsp -= 8;
  if (t.armed.kind == BranchKind::kReturn) rsp += 8 + static_cast<uint64_t>(t.armed.disp);
  ContinueFrom(t, outcome.next, rsp, true);
}

void OnSignal(int, siginfo_t* info, void* context) {
  ThreadState* t = CurrentThreadState();
  if (t == nullptr) return;
  const int saved_errno = errno;
  t->busy.store(1);
  if (t->attached.load()) {
    const uint64_t start = ReadTsc();
    const bool ours = info->si_code == POLL_IN || info->si_code == POLL_HUP;
    const RegisterFile regs = RegistersOf(static_cast<const ucontext_t*>(context));
    if (ours && info->si_fd == t->breakpoint_fd) {
      OnBreakpoint(*t, regs);
      t->counters.value[kTicksBreakpointHandler] += ReadTsc() - start;
    } else if (ours && info->si_fd == t->sampler_fd) {
      OnSample(*t, regs);
      t->counters.value[kTicksSampleHandler] += ReadTsc() - start;
    } else {
      ++t->counters.value[kForeignSignals];
    }
  }
  t->busy.store(0);
  errno = saved_errno;
}

}  // namespace

TracerConfig& Config() {
  static TracerConfig config;
  return config;
}

ThreadState*& CurrentThreadState() {
  static thread_local ThreadState* state __attribute__((tls_model("initial-exec"))) = nullptr;
  return state;
}

void InitDecoder() { ZydisDecoderInit(&g_decoder, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64); }

bool InstallSignalHandler() {
  struct sigaction action;
  std::memset(&action, 0, sizeof action);
  action.sa_sigaction = OnSignal;
  action.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&action.sa_mask);
  return sigaction(Config().signal, &action, nullptr) == 0;
}

bool AttachThread(ThreadState& t, int* error) {
  t.tid = CurrentTid();
  t.active = false;
  t.used = 0;
  t.count = 0;
  t.last_flush_ns = MonotonicNs();
  t.counters = TracerCounters{};
  t.cache.Clear();
  const TracerConfig& c = Config();
  t.breakpoint_fd = OpenBreakpoint(t.tid, c.placeholder, c.signal, &t.breakpoint_attr);
  if (t.breakpoint_fd < 0) {
    *error = -t.breakpoint_fd;
    return false;
  }
  t.sampler_fd = OpenSampler(t.tid, c.period_ns, c.signal);
  if (t.sampler_fd < 0) {
    *error = -t.sampler_fd;
    CloseFd(t.breakpoint_fd);
    t.breakpoint_fd = -1;
    return false;
  }
  CurrentThreadState() = &t;
  t.attached.store(1);
  if (!ArmOnce(t.sampler_fd)) {
    *error = EINVAL;
    t.attached.store(0);
    CloseFd(t.sampler_fd);
    CloseFd(t.breakpoint_fd);
    t.sampler_fd = t.breakpoint_fd = -1;
    return false;
  }
  return true;
}

void DetachThread(ThreadState& t) {
  DisableEvent(t.sampler_fd);
  DisableEvent(t.breakpoint_fd);
  t.attached.store(0);
  // Wait for a handler that is running on the thread (only at process exit is it another one).
  for (int spins = 0; t.busy.load() != 0 && spins < 100000; ++spins) RawSyscall(SYS_sched_yield);
  EndBurst(t, SwbtEndReason::kThreadExit);
  FlushBursts(t);
  CloseFd(t.sampler_fd);
  CloseFd(t.breakpoint_fd);
  t.sampler_fd = t.breakpoint_fd = -1;
}

void FlushBursts(ThreadState& t) {
  size_t done = 0;
  while (done < t.used) {
    const long n = RawSyscall(SYS_write, Config().output_fd, reinterpret_cast<long>(t.buffer + done),
                              static_cast<long>(t.used - done));
    if (n == -EINTR) continue;
    if (n <= 0) break;  // the file is gone or full: the bursts are dropped
    done += static_cast<size_t>(n);
    ++t.counters.value[kFlushes];
    t.counters.value[kBytesWritten] += static_cast<uint64_t>(n);
  }
  t.used = 0;
  t.last_flush_ns = t.time_ns;
}

}  // namespace ptprof::swbt
