#include "src/record/qemu_flow.h"

#include <algorithm>
#include <optional>

#include <fmt/format.h>

#include "sideband/x86_insn.h"
#include "src/record/branch_kind.h"
#include "src/record/qemu/stream_format.h"

namespace ptprof::record {

namespace sf = qemu_stream;
using pt::BranchKind;
using Insn = QemuBlockCache::Insn;

namespace {
constexpr uint64_t kSysRtSigreturn = 15;
constexpr uint64_t kSysClone = 56, kSysClone3 = 435;
constexpr size_t kSigreturnLookahead = 1 << 22;  // words searched for the end of a handler
constexpr size_t kCompactAt = 1 << 16;            // consumed words dropped from the queue

uint64_t Word64(const std::vector<uint32_t>& words, size_t at) {
  return uint64_t{words[at]} | (uint64_t{words[at + 1]} << 32);
}

// The offset of the first PSB at or after `from` (bytes.size() when there is none).
size_t FirstPsb(const std::vector<uint8_t>& bytes, size_t from) {
  static const uint8_t kPsb[16] = {0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
                                   0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82};
  auto it = std::search(bytes.begin() + static_cast<std::ptrdiff_t>(from), bytes.end(),
                        std::begin(kPsb), std::end(kPsb));
  return static_cast<size_t>(it - bytes.begin());
}

// Whether an instruction's bytes span two pages.
bool CrossesPage(const Insn& insn) { return (insn.ip & 0xfff) + insn.size > 0x1000; }

size_t EventWords(uint32_t tag) {
  if (tag == sf::kTagSyscall) return sf::kSyscallWords;
  if (tag == sf::kTagSysret) return sf::kSysretWords;
  if (tag == sf::kTagLost) return sf::kLostWords;
  if (tag == sf::kTagHostTime) return sf::kHostTimeWords;
  return 1;
}
}  // namespace

Result<const QemuBlockCache::Block*> QemuBlockCache::Decode(uint32_t id) {
  if (id >= stream_.blocks.size() || !stream_.blocks[id].defined)
    return Fail(fmt::format("QEMU stream: block {} executed but never defined", id));
  if (blocks_.size() <= id) blocks_.resize(std::max<size_t>(stream_.blocks.size(), id + 1));
  static thread_local X86Decoder decoder;
  const QemuBlock& block = stream_.blocks[id];
  const uint8_t* code = stream_.CodeOf(block);
  const uint8_t* sizes = stream_.SizesOf(block);
  Block& out = blocks_[id];
  out.insns.clear();
  uint64_t ip = block.vaddr;
  size_t offset = 0;
  for (uint16_t i = 0; i < block.insns; ++i) {
    // The last instruction's size from QEMU can be short (page-crossing instructions in QEMU
    // 7.2); its bytes come with lookahead, and its length is what the decoder finds.
    const bool last = i + 1 == block.insns;
    const size_t available = last ? block.bytes - offset : sizes[i];
    auto insn = decoder.Decode(code + offset, available, ExecMode::k64Bit);
    if (!insn || (!last && insn->length != sizes[i])) {
      std::string hex;
      for (uint8_t k = 0; k < sizes[i]; ++k) hex += fmt::format("{:02x}", code[offset + k]);
      return Fail(fmt::format("QEMU stream: block {}: cannot decode the instruction at {:#x} ({}){}",
                              id, ip, hex,
                              insn ? ": length differs from QEMU's" : ": " + insn.error().message));
    }
    out.insns.push_back({ip, insn->length, UserModeBranchKind(*insn),
                         insn->has_branch_disp ? insn->NextIp(ip) : 0});
    ip += insn->length;
    offset += insn->length;
  }
  out.straight_end = 0;
  while (out.straight_end + 1 < out.insns.size() &&
         out.insns[out.straight_end].kind == BranchKind::kNone)
    ++out.straight_end;
  if (!out.insns.empty()) {
    const Insn& last = out.insns.back();
    // QEMU 7.2 reports such an instruction with the size of its part on the first page.
    out.last_crosses_page = CrossesPage(last) && sizes[block.insns - 1] < last.size;
  }
  out.done = true;
  return &out;
}

struct QemuThreadEncoder::State {
  State(const QemuStream& s, QemuBlockCache& c, const QemuFlowOptions& o, uint32_t tid,
        uint64_t tsc_begin)
      : stream(s), cache(c), options(o), encoder(o.encoder), tsc(tsc_begin),
        snapshots(o.buffer_size > 0) {
    out.tid = tid;
    out.tsc_begin = tsc_begin;
  }

  const QemuStream& stream;
  QemuBlockCache& cache;
  const QemuFlowOptions& options;
  pt::TraceEncoder encoder;
  QemuThreadTrace out;
  uint64_t tsc;
  const bool snapshots;
  bool started = false;
  bool lost = false;       // words were lost since the last block: OVF before the next one
  std::optional<Insn> pending;  // executed; where it went is not known yet
  bool pending_short = false;   // it crosses a page and ended its block reported short
  std::vector<uint32_t> queue;  // words not yet encoded start at queue[pos]
  size_t pos = 0;
  bool final = false;
  std::vector<std::pair<uint32_t, uint64_t>> clones;
  uint64_t host_ns = 0;  // the host time of the last kTagHostTime
  std::optional<triggers::SnapshotDecision> due;  // a decided cut not yet made
  bool due_after_insn = false;                     // wait for one more instruction first
  std::vector<uint64_t> breakpoints;  // addr= triggers' addresses, sorted (read at the first step)
  bool breakpoints_known = false;
  std::vector<triggers::TriggerEvent> external;  // e.g. signals, fed once host_ns reaches them
  Status FeedExternal(bool all);

  enum class Resume { kFound, kNone, kWait };
  Resume ResumeAfterSignal(size_t from, uint64_t* ip);
  // Where ResumeAfterSignal's last scan that waited for more words stopped: the scan it began at
  // `scan_from` goes on from `scan_at` (whether it passed an rt_sigreturn: `scan_after`), so that
  // a long handler's words are read once, not again with every piece that arrives. Forgotten when
  // the queue is compacted.
  size_t scan_from = SIZE_MAX;
  size_t scan_at = 0;
  bool scan_after = false;
  Status Cut(std::string label);
  Status CutDue();
  Status Decide(const triggers::TriggerEvent& event, bool after_insn);
  Status Step(const Insn& insn, uint64_t next);
  Status Deliver(const Insn& insn, uint64_t next, size_t at);
  Status Event(uint32_t tag, size_t at);
  Status Process();
};

// Where an interrupted thread resumes: the first block after the next rt_sigreturn, if found.
QemuThreadEncoder::State::Resume QemuThreadEncoder::State::ResumeAfterSignal(size_t from,
                                                                              uint64_t* ip) {
  bool after_sigreturn = false;
  size_t i = from;
  if (from == scan_from) {
    i = scan_at;
    after_sigreturn = scan_after;
  }
  for (; i < queue.size() && i < from + kSigreturnLookahead;) {
    const uint32_t word = queue[i];
    if (word >= sf::kFirstTag) {
      const size_t n = EventWords(word);
      if (i + n > queue.size()) break;  // its payload is still to come
      if (word == sf::kTagSyscall && Word64(queue, i + 1) == kSysRtSigreturn) after_sigreturn = true;
      i += n;
      continue;
    }
    if (after_sigreturn) {
      if (word < stream.blocks.size() && stream.blocks[word].defined) {
        *ip = stream.blocks[word].vaddr;
        return Resume::kFound;
      }
      return Resume::kNone;
    }
    ++i;
  }
  if (final || i >= from + kSigreturnLookahead) return Resume::kNone;
  scan_from = from;
  scan_at = i;
  scan_after = after_sigreturn;
  return Resume::kWait;
}

Status QemuThreadEncoder::State::Cut(std::string label) {
  if (auto s = encoder.End(); !s) return s;
  std::vector<uint8_t> bytes = encoder.TakeBytes();
  size_t from = bytes.size() > options.buffer_size ? bytes.size() - options.buffer_size : 0;
  from = FirstPsb(bytes, from);
  QemuSnapshot snapshot;
  snapshot.pt.assign(bytes.begin() + static_cast<std::ptrdiff_t>(from), bytes.end());
  snapshot.label = std::move(label);
  snapshot.tsc = tsc;
  snapshot.insns = out.insns;
  snapshot.host_ns = host_ns;
  out.snapshots.push_back(std::move(snapshot));
  return {};
}

Status QemuThreadEncoder::State::CutDue() {
  triggers::SnapshotDecision decision = std::move(*due);
  due.reset();
  if (auto s = Cut(decision.label); !s) return s;
  out.snapshots.back().host_ns = decision.time_ns;
  out.snapshots.back().latency_ns = decision.latency_ns;
  return {};
}

// Feeds one event to the trigger engine; a decision is cut now (post 0 and no instruction to
// wait for) or later (Step, a later host time, Finish).
Status QemuThreadEncoder::State::Decide(const triggers::TriggerEvent& event, bool after_insn) {
  if (!options.triggers || !snapshots) return {};
  auto decision = options.triggers->OnEvent(event);
  if (!decision) return {};
  if (due)
    if (auto s = CutDue(); !s) return s;  // an earlier decision still waiting: cut it first
  due = std::move(decision);
  due_after_insn = after_insn;
  if (!due_after_insn && due->cut_ns <= host_ns) return CutDue();
  return {};
}

// Signals and other events the recorder observed outside the stream, fed in time order once the
// thread's host time has reached them (or all of them at the end).
Status QemuThreadEncoder::State::FeedExternal(bool all) {
  size_t fed = 0;
  for (; fed < external.size() && (all || external[fed].time_ns <= host_ns); ++fed)
    if (auto s = Decide(external[fed], false); !s) return s;
  external.erase(external.begin(), external.begin() + static_cast<std::ptrdiff_t>(fed));
  return {};
}

Status QemuThreadEncoder::State::Step(const Insn& insn, uint64_t next) {
  if (snapshots && options.triggers) {
    if (!breakpoints_known) {
      breakpoints = options.triggers->BreakpointAddresses();
      std::sort(breakpoints.begin(), breakpoints.end());
      breakpoints_known = true;
    }
    if (!breakpoints.empty() && std::binary_search(breakpoints.begin(), breakpoints.end(), insn.ip)) {
      // addr=: cut after this instruction, so the snapshot ends with it.
      triggers::TriggerEvent event;
      event.kind = triggers::TriggerEvent::Kind::kBreakpoint;
      event.tid = out.tid;
      event.time_ns = host_ns;
      event.address = insn.ip;
      if (auto s = Decide(event, true); !s) return s;
    }
  }
  pt::ExecutedInsn executed{insn.ip, insn.size, insn.kind, next, insn.target};
  if (options.keep_ips) out.ips.push_back(insn.ip);
  ++out.insns;
  tsc += options.cycles_per_insn;
  if (auto s = encoder.Step(executed, tsc); !s) return s;
  if (due) {
    due_after_insn = false;
    if (due->cut_ns <= host_ns)
      if (auto s = CutDue(); !s) return s;
  }
  if (snapshots && options.triggers) {
    const uint64_t every = options.triggers->SmallestInsnsPeriod();
    if (every != 0 && out.insns % every == 0) {
      triggers::TriggerEvent event;
      event.kind = triggers::TriggerEvent::Kind::kInsns;
      event.tid = out.tid;
      event.time_ns = host_ns;
      event.insns = out.insns;
      if (auto s = Decide(event, false); !s) return s;
    }
  }
  if (snapshots) {
    // The ring wraps: only the newest buffer_size bytes survive (trimmed in large steps).
    if (encoder.bytes().size() > 2 * options.buffer_size + 4096)
      encoder.DropPrefix(encoder.bytes().size() - options.buffer_size);
    if (options.snapshot_every_insns && out.insns % options.snapshot_every_insns == 0)
      return Cut(fmt::format("insns={}", options.snapshot_every_insns));
  }
  return {};
}

// `insn` executed and execution continued at `next`: word index `at` is where the stream goes on.
Status QemuThreadEncoder::State::Deliver(const Insn& insn, uint64_t next, size_t at) {
  const uint64_t fall = insn.ip + insn.size;
  uint64_t interrupted = 0;  // where a signal interrupted the flow, 0 for none
  switch (insn.kind) {
    case BranchKind::kCondJump:
      if (next != fall && next != insn.target) {
        uint64_t resume = 0;
        const bool found = ResumeAfterSignal(at, &resume) == Resume::kFound;
        interrupted = (found && resume == insn.target) ? insn.target : fall;
      }
      break;
    case BranchKind::kDirectJump:
    case BranchKind::kDirectCall:
      if (next != insn.target) interrupted = insn.target;
      break;
    default:
      break;  // kNone: the encoder sees the async transfer; indirect: any target is valid
  }
  if (interrupted == 0) {
    if (insn.kind == BranchKind::kNone && next != fall) ++out.signals;
    return Step(insn, next);
  }
  ++out.signals;
  if (auto s = Step(insn, interrupted); !s) return s;
  return encoder.AsyncBranch(interrupted, next, tsc);
}

Status QemuThreadEncoder::State::Event(uint32_t tag, size_t at) {
  if (tag == sf::kTagSyscall && pending && pending->kind == BranchKind::kSyscall) {
    // The syscall instruction is complete: tracing stops here whatever comes next.
    if (auto s = Step(*pending, pending->ip + pending->size); !s) return s;
    pending.reset();
    const uint64_t number = Word64(queue, at + 1);
    for (uint64_t trigger : options.snapshot_syscalls)
      if (snapshots && trigger == number)
        if (auto s = Cut(fmt::format("syscall={}", number)); !s) return s;
    triggers::TriggerEvent event;
    event.kind = triggers::TriggerEvent::Kind::kSyscallEnter;
    event.tid = out.tid;
    event.time_ns = host_ns;
    event.syscall = number;
    if (auto s = Decide(event, false); !s) return s;
  } else if (tag == sf::kTagHostTime) {
    host_ns = Word64(queue, at + 1);
    if (due && !due_after_insn && due->cut_ns <= host_ns)
      if (auto s = CutDue(); !s) return s;
    if (snapshots && options.triggers && options.triggers->SmallestPeriodNs() != 0) {
      triggers::TriggerEvent tick;  // every=: the plugin's clock, at syscalls and every full buffer
      tick.kind = triggers::TriggerEvent::Kind::kTick;
      tick.tid = out.tid;
      tick.time_ns = host_ns;
      if (auto s = Decide(tick, false); !s) return s;
    }
    if (!external.empty())
      if (auto s = FeedExternal(false); !s) return s;
  } else if (tag == sf::kTagSysret) {
    const uint64_t number = Word64(queue, at + 1);
    const auto ret = static_cast<int64_t>(Word64(queue, at + 3));
    triggers::TriggerEvent event;
    event.kind = triggers::TriggerEvent::Kind::kSyscallExit;
    event.tid = out.tid;
    event.time_ns = host_ns;
    event.syscall = number;
    // Cut after the next instruction: the snapshot then holds the return into user mode.
    if (auto s = Decide(event, true); !s) return s;
    if ((number == kSysClone || number == kSysClone3) && ret > 0)
      clones.emplace_back(static_cast<uint32_t>(ret), tsc);
  } else if (tag == sf::kTagLost) {
    // Where the last instruction before the loss went is unknown: it is lost with the rest.
    out.lost_words += queue[at + 1];
    pending.reset();
    lost = true;
  }
  return {};
}

Status QemuThreadEncoder::State::Process() {
  const bool fast = !options.keep_ips && !snapshots;
  while (pos < queue.size()) {
    const uint32_t word = queue[pos];
    if (word >= sf::kFirstTag) {
      const size_t n = EventWords(word);
      if (pos + n > queue.size()) {
        if (final) pos = queue.size();  // an event cut short at the end: nothing to encode
        break;
      }
      if (auto s = Event(word, pos); !s) return s;
      pos += n;
      continue;
    }
    auto cached = cache.Get(word);
    if (!cached) return tl::unexpected(cached.error());
    const auto& insns = (*cached)->insns;
    if (insns.empty()) {
      ++pos;
      continue;
    }
    // The block begins with the instruction that ended the last one, which ran once: a
    // rep-string instruction runs as its own block once per iteration, and one that crosses a
    // page ends its block as QEMU announced it but then runs in a block of its own (QEMU 7.2).
    const bool again = pending && pending->ip == insns[0].ip &&
                       (pending->kind == BranchKind::kNone || CrossesPage(*pending));
    if (!again && pending && pending->kind == BranchKind::kCondJump) {
      // A branch that went neither way was interrupted by a signal: its outcome is where the
      // thread resumes after the handler, which may still be to come.
      const uint64_t next = insns[0].ip;
      uint64_t resume = 0;
      if (next != pending->ip + pending->size && next != pending->target &&
          ResumeAfterSignal(pos + 1, &resume) == Resume::kWait)
        break;
    }
    ++pos;
    if ((*cached)->last_crosses_page) ++out.page_crossings;
    size_t first = 0;
    if (!started) {
      if (auto s = encoder.Begin(insns[0].ip, ExecMode::k64Bit, tsc); !s) return s;
      started = true;
      lost = false;
      out.first_ip = insns[0].ip;
    } else if (lost) {
      if (auto s = encoder.Overflow(insns[0].ip, tsc); !s) return s;
      ++out.overflows;
      lost = false;
    }
    if (pending) {
      if (again) {
        if (pending_short)
          ++out.page_reruns;
        else
          ++out.rep_repeats;  // (a rep-string instruction's iterations after the first)
        first = 1;
        if (insns.size() == 1) {
          pending_short = (*cached)->last_crosses_page;
          continue;
        }
      }
      if (auto s = Deliver(*pending, insns[first].ip, pos); !s) return s;
      pending.reset();
    }
    const size_t straight_end = (*cached)->straight_end;
    size_t k = first;
    if (fast && k < straight_end && !encoder.NeedsStep()) {
      // Straight-line code inside a block needs no packet: count it at once (the hot path).
      const uint64_t n = straight_end - k;
      out.insns += n;
      tsc += n * options.cycles_per_insn;
      encoder.CountStraightLine(n);
      k = straight_end;
    }
    for (; k + 1 < insns.size(); ++k)
      if (auto s = Deliver(insns[k], insns[k + 1].ip, pos); !s) return s;
    pending = insns.back();
    pending_short = (*cached)->last_crosses_page;
  }
  if (pos >= kCompactAt && pos * 2 >= queue.size()) {
    queue.erase(queue.begin(), queue.begin() + static_cast<std::ptrdiff_t>(pos));
    pos = 0;
    scan_from = SIZE_MAX;
  }
  return {};
}

QemuThreadEncoder::QemuThreadEncoder(const QemuStream& stream, QemuBlockCache& cache,
                                     const QemuFlowOptions& options, uint32_t tid,
                                     uint64_t tsc_begin)
    : state_(std::make_unique<State>(stream, cache, options, tid, tsc_begin)) {}

QemuThreadEncoder::~QemuThreadEncoder() = default;

Status QemuThreadEncoder::Feed(const uint32_t* words, size_t count) {
  state_->queue.insert(state_->queue.end(), words, words + count);
  return state_->Process();
}

void QemuThreadEncoder::AddTriggerEvent(const triggers::TriggerEvent& event) {
  auto& external = state_->external;
  auto at = std::upper_bound(external.begin(), external.end(), event,
                             [](const triggers::TriggerEvent& a, const triggers::TriggerEvent& b) {
                               return a.time_ns < b.time_ns;
                             });
  external.insert(at, event);
}

std::vector<std::pair<uint32_t, uint64_t>> QemuThreadEncoder::TakeClones() {
  std::vector<std::pair<uint32_t, uint64_t>> taken;
  taken.swap(state_->clones);
  return taken;
}

Result<QemuThreadTrace> QemuThreadEncoder::Finish() {
  State& st = *state_;
  st.final = true;
  if (auto s = st.Process(); !s) return tl::unexpected(s.error());
  if (st.pending) {
    // The thread's last instruction: a syscall (exit) or an instruction that falls through.
    // A branch whose outcome nobody saw is left out (the trace ends before it).
    const uint64_t fall = st.pending->ip + st.pending->size;
    if (st.pending->kind == BranchKind::kSyscall || st.pending->kind == BranchKind::kNone)
      if (auto s = st.Step(*st.pending, fall); !s) return tl::unexpected(s.error());
  }
  if (auto s = st.FeedExternal(true); !s) return tl::unexpected(s.error());
  if (st.due)
    if (auto s = st.CutDue(); !s) return tl::unexpected(s.error());
  if (st.started && st.snapshots) {
    if (auto s = st.Cut("end"); !s) return tl::unexpected(s.error());
  } else if (st.started) {
    if (auto s = st.encoder.End(); !s) return tl::unexpected(s.error());
  }
  st.out.pt = st.snapshots ? std::vector<uint8_t>{} : st.encoder.bytes();
  st.out.stats = st.encoder.stats();
  st.out.tsc_end = st.tsc;
  return std::move(st.out);
}

Result<QemuThreadTrace> EncodeQemuThread(const QemuStream& stream, const QemuThread& thread,
                                         QemuBlockCache& cache, const QemuFlowOptions& options,
                                         uint64_t tsc_begin) {
  QemuThreadEncoder encoder(stream, cache, options, thread.tid, tsc_begin);
  if (auto s = encoder.Feed(thread.words.data(), thread.words.size()); !s)
    return tl::unexpected(s.error());
  return encoder.Finish();
}

}  // namespace ptprof::record
