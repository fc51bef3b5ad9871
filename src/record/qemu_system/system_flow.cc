#include "src/record/qemu_system/system_flow.h"

#include "src/record/triggers/syscall_names.h"

#include <algorithm>
#include <optional>

#include <fmt/format.h>

#include "sideband/x86_insn.h"
#include "src/record/branch_kind.h"
#include "src/record/qemu/stream_format.h"

namespace ptprof::record {

namespace sf = qemu_stream;
using pt::BranchKind;

namespace {

constexpr size_t kResumeLookahead = 1 << 22;  // words searched for where an interrupt returns

enum Counted : uint8_t { kNotCounted, kCli, kSti, kPushf, kPopf };

// One instruction of a translated block, classified for kernel+user tracing.
struct SysInsn {
  uint64_t ip;
  uint64_t target;  // direct branches: where they go when taken
  BranchKind kind;
  uint8_t size;
  bool iret;        // iret: returns from an interrupt or exception
  bool sync_entry;  // syscall, int n, int3: enters the kernel at a vector synchronously
  Counted counted;
};

bool KernelHalf(uint64_t address) { return (address >> 63) != 0; }

Counted CountedOf(const char* mnemonic) {
  const std::string m = mnemonic;
  if (m == "cli") return kCli;
  if (m == "sti") return kSti;
  if (m == "pushf" || m == "pushfq" || m == "pushfd") return kPushf;
  if (m == "popf" || m == "popfq" || m == "popfd") return kPopf;
  return kNotCounted;
}

// The per-instruction facts of every translated block, decoded once.
class SystemBlocks {
 public:
  explicit SystemBlocks(const QemuStream& stream) : stream_(stream) {}

  Result<const std::vector<SysInsn>*> Get(uint32_t id) {
    if (id >= stream_.blocks.size() || !stream_.blocks[id].defined)
      return Fail(fmt::format("QEMU stream: block {} executed but never defined", id));
    if (insns_.size() <= id) {
      insns_.resize(stream_.blocks.size());
      done_.resize(stream_.blocks.size());
    }
    if (done_[id]) return &insns_[id];
    const QemuBlock& block = stream_.blocks[id];
    const uint8_t* code = stream_.CodeOf(block);
    const uint8_t* sizes = stream_.SizesOf(block);
    std::vector<SysInsn>& out = insns_[id];
    uint64_t ip = block.vaddr;
    size_t offset = 0;
    for (uint16_t i = 0; i < block.insns; ++i) {
      const bool last = i + 1 == block.insns;
      const size_t available = last ? block.bytes - offset : sizes[i];
      if (offset >= block.bytes)
        return Fail(fmt::format("QEMU stream: block {} at {:#x}: code ends before instruction {}",
                                id, block.vaddr, i));
      auto insn = decoder_.Decode(code + offset, std::min<size_t>(available, block.bytes - offset),
                                  ExecMode::k64Bit);
      if (!insn || (!last && insn->length != sizes[i]))
        return Fail(fmt::format("QEMU stream: block {}: cannot decode the instruction at {:#x}{}",
                                id, ip, insn ? ": length differs from QEMU's" : ""));
      BranchKind kind = UserModeBranchKind(*insn);
      // Kernel and user are both traced: entering the kernel is a far transfer (a TIP).
      if (kind == BranchKind::kSyscall) kind = BranchKind::kFarTransfer;
      const bool sync_entry = insn->kind == X86Kind::kSyscall || insn->kind == X86Kind::kInterrupt;
      out.push_back({ip, insn->has_branch_disp ? insn->NextIp(ip) : 0, kind, insn->length,
                     insn->kind == X86Kind::kIret, sync_entry, CountedOf(insn->mnemonic)});
      ip += insn->length;
      offset += insn->length;
    }
    done_[id] = 1;
    return &out;
  }

 private:
  const QemuStream& stream_;
  X86Decoder decoder_;
  std::vector<std::vector<SysInsn>> insns_;
  std::vector<uint8_t> done_;
};

size_t FirstPsb(const std::vector<uint8_t>& bytes, size_t from) {
  static const uint8_t kPsb[16] = {0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
                                   0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82};
  auto it = std::search(bytes.begin() + static_cast<std::ptrdiff_t>(from), bytes.end(),
                        std::begin(kPsb), std::end(kPsb));
  return static_cast<size_t>(it - bytes.begin());
}

// Where execution resumed after the interrupt or exception whose handler starts at word `from`:
// the first block after an iret that `fits`.
template <typename Fits>
std::optional<uint64_t> FindResume(SystemBlocks& blocks, const std::vector<uint32_t>& words,
                                   size_t from, Fits fits) {
  bool after_iret = false;
  for (size_t i = from; i < words.size() && i < from + kResumeLookahead; ++i) {
    if (words[i] >= sf::kFirstTag) continue;
    auto block = blocks.Get(words[i]);
    if (!block || (*block)->empty()) return std::nullopt;
    if (after_iret && fits((*block)->front().ip)) return (*block)->front().ip;
    after_iret = (*block)->back().iret;
  }
  return std::nullopt;
}

}  // namespace

Result<VcpuTrace> EncodeVcpu(const QemuStream& stream, const QemuThread& vcpu,
                             const KernelFacts& facts, const SystemFlowOptions& options) {
  VcpuTrace out;
  out.vcpu = vcpu.tid;
  SystemBlocks blocks(stream);
  pt::TraceEncoder encoder(options.encoder);
  const bool snapshots = options.buffer_size > 0;
  uint64_t tsc = 0;
  std::optional<SyscallSpan> open_syscall;
  uint64_t insns_at_entry = 0;
  bool started = false, ended = false;

  auto cut = [&](std::string label) -> Status {
    if (auto s = encoder.End(); !s) return s;
    std::vector<uint8_t> bytes = encoder.TakeBytes();
    size_t from = bytes.size() > options.buffer_size ? bytes.size() - options.buffer_size : 0;
    from = FirstPsb(bytes, from);
    QemuSnapshot snapshot;
    snapshot.pt.assign(bytes.begin() + static_cast<std::ptrdiff_t>(from), bytes.end());
    snapshot.label = std::move(label);
    snapshot.tsc = tsc;
    snapshot.insns = out.insns;
    out.snapshots.push_back(std::move(snapshot));
    return {};
  };
  auto count = [&](const SysInsn& insn) {
    const int half = KernelHalf(insn.ip) ? 1 : 0;
    ++out.insns;
    out.kernel_insns += static_cast<uint64_t>(half);
    tsc += options.cycles_per_insn;
    if (options.keep_ips) out.ips.push_back(insn.ip);
    switch (insn.counted) {
      case kCli: ++out.counts.cli[half]; break;
      case kSti: ++out.counts.sti[half]; break;
      case kPushf: ++out.counts.pushf[half]; break;
      case kPopf: ++out.counts.popf[half]; break;
      case kNotCounted: break;
    }
  };
  auto step = [&](const SysInsn& insn, uint64_t next) -> Status {
    count(insn);
    if (auto s = encoder.Step({insn.ip, insn.size, insn.kind, next, insn.target}, tsc); !s)
      return s;
    if (snapshots && encoder.bytes().size() > 2 * options.buffer_size + 4096)
      encoder.DropPrefix(encoder.bytes().size() - options.buffer_size);
    return {};
  };
  // Runs insns[first, end) of a block; the last of them continued at `next`.
  auto run = [&](const std::vector<SysInsn>& insns, size_t first, size_t end,
                 uint64_t next) -> Status {
    for (size_t k = first; k < end; ++k) {
      const bool last = k + 1 == end;
      if (!last && insns[k].kind == BranchKind::kNone && !snapshots && insns[k].counted == kNotCounted &&
          !encoder.NeedsStep()) {
        count(insns[k]);  // straight-line code inside a block needs no packet
        encoder.CountStraightLine(1);
        continue;
      }
      if (auto s = step(insns[k], last ? next : insns[k + 1].ip); !s) return s;
    }
    return {};
  };
  auto ns = [&](uint64_t t) {
    return static_cast<uint64_t>(static_cast<long double>(t) * 1e9L / options.tsc_hz);
  };
  // A decision of the trigger engine cuts a snapshot now (the guest's ns as its time).
  auto decide = [&](const triggers::TriggerEvent& event) -> Status {
    auto decision = options.triggers->OnEvent(event);
    if (!decision) return {};
    if (auto s = cut(decision->label); !s) return s;
    out.snapshots.back().host_ns = decision->time_ns;  // guest ns here
    out.snapshots.back().latency_ns = decision->latency_ns;
    return {};
  };
  // addr= and every= after each block ran: a breakpoint address inside the instructions that ran
  // (the snapshot then ends after the block), and the guest's clock, fed as ticks every 1/64 of
  // the smallest period (so an every= snapshot is at most that late).
  const std::vector<uint64_t> breakpoints =
      options.triggers ? options.triggers->BreakpointAddresses() : std::vector<uint64_t>{};
  const uint64_t tick_ns =
      options.triggers ? std::max<uint64_t>(options.triggers->SmallestPeriodNs() / 64, 1) : 0;
  const bool ticks = options.triggers && options.triggers->SmallestPeriodNs() != 0;
  uint64_t next_tick_ns = 0;
  auto observe = [&](const std::vector<SysInsn>& ran, size_t first) -> Status {
    if (!snapshots || !options.triggers) return {};
    triggers::TriggerEvent event;
    event.tid = out.vcpu;
    event.time_ns = ns(tsc);
    for (uint64_t address : breakpoints)
      if (first < ran.size() && address >= ran[first].ip && address <= ran.back().ip) {
        event.kind = triggers::TriggerEvent::Kind::kBreakpoint;
        event.address = address;
        if (auto s = decide(event); !s) return s;
      }
    if (ticks && event.time_ns >= next_tick_ns) {
      next_tick_ns = event.time_ns + tick_ns;
      event.kind = triggers::TriggerEvent::Kind::kTick;
      if (auto s = decide(event); !s) return s;
    }
    return {};
  };
  // The syscall bookkeeping at the start of each executed block.
  auto follow_syscalls = [&](const SysInsn* previous, uint64_t ip) -> Status {
    if (previous && previous->sync_entry && ip == facts.syscall_entry()) {
      open_syscall = SyscallSpan{"", previous->ip, 0, tsc};
      insns_at_entry = out.insns;
      return {};
    }
    if (!open_syscall) return {};
    if (KernelHalf(ip)) {
      if (open_syscall->handler.empty()) {
        open_syscall->handler = facts.HandlerAt(ip);
        if (!options.end_at_handler.empty() && open_syscall->handler == options.end_at_handler)
          ended = true;
      }
      return {};
    }
    open_syscall->insns = out.insns - insns_at_entry;
    out.syscalls.push_back(*open_syscall);
    const std::string handler = open_syscall->handler;
    const uint64_t entry_tsc = open_syscall->tsc;
    open_syscall.reset();
    if (snapshots && options.triggers) {
      triggers::TriggerEvent event;
      event.tid = out.vcpu;
      event.syscall = triggers::SyscallNumberOf(handler).value_or(~0ull);
      event.kind = triggers::TriggerEvent::Kind::kSyscallEnter;
      event.time_ns = ns(entry_tsc);
      auto decision = options.triggers->OnEvent(event);
      if (decision) {
        if (auto s = cut(decision->label); !s) return s;
        out.snapshots.back().host_ns = decision->time_ns;  // guest ns here
        return {};
      }
      event.kind = triggers::TriggerEvent::Kind::kSyscallExit;
      event.time_ns = ns(tsc);
      return decide(event);
    }
    if (snapshots && std::find(options.snapshot_syscalls.begin(), options.snapshot_syscalls.end(),
                               handler) != options.snapshot_syscalls.end())
      return cut("syscall=" + handler);
    return {};
  };

  const auto& words = vcpu.words;
  const std::vector<SysInsn>* pending = nullptr;  // the previous block: where it went is not known
  size_t pending_first = 0;
  for (size_t i = 0; i < words.size(); ++i) {
    if (words[i] >= sf::kFirstTag) continue;
    auto got = blocks.Get(words[i]);
    if (!got) return tl::unexpected(got.error());
    const std::vector<SysInsn>& insns = **got;
    if (insns.empty()) continue;
    const uint64_t next = insns.front().ip;
    if (!pending) {
      if (auto s = encoder.Begin(next, ExecMode::k64Bit, tsc); !s) return tl::unexpected(s.error());
      started = true;
      pending = &insns;
      pending_first = 0;
      continue;
    }
    const std::vector<SysInsn>& prev = *pending;
    const SysInsn& last = prev.back();
    const uint64_t fall = last.ip + last.size;
    const bool crosses_page = (last.ip & 0xfff) + last.size > 0x1000;
    if (last.ip == next && (last.kind == BranchKind::kNone || crosses_page)) {
      // A rep-string instruction runs as its own block once per iteration: one instruction,
      // counted when its last iteration is done. An instruction that crosses a page ends its
      // block as announced but runs in a block of its own (QEMU 7.2).
      if (last.kind == BranchKind::kNone && !crosses_page) ++out.rep_repeats;
      if (auto s = run(prev, pending_first, prev.size() - 1, next); !s)
        return tl::unexpected(s.error());
      pending = &insns;
      pending_first = 0;
      continue;
    }
    KernelFacts::Entry entry = last.sync_entry ? KernelFacts::Entry::kNone : facts.EntryAt(next);
    if (entry == KernelFacts::Entry::kNone) {
      const bool consistent =
          (last.kind == BranchKind::kNone && next == fall) ||
          (last.kind == BranchKind::kCondJump && (next == fall || next == last.target)) ||
          ((last.kind == BranchKind::kDirectJump || last.kind == BranchKind::kDirectCall) &&
           next == last.target) ||
          last.kind == BranchKind::kIndirectJump || last.kind == BranchKind::kIndirectCall ||
          last.kind == BranchKind::kReturn || last.kind == BranchKind::kFarTransfer;
      if (!consistent) entry = KernelFacts::Entry::kInterrupt;  // an entry kallsyms did not name
    }
    if (entry == KernelFacts::Entry::kNone) {
      if (auto s = run(prev, pending_first, prev.size(), next); !s) return tl::unexpected(s.error());
    } else {
      // An asynchronous transfer: find the instruction it interrupted.
      size_t end = prev.size();
      std::optional<uint64_t> from;
      const bool kernel = KernelHalf(last.ip);
      if (entry == KernelFacts::Entry::kFault) {
        ++out.faults;
        const uint64_t lo = prev[pending_first].ip, hi = last.ip;
        from = FindResume(blocks, words, i, [&](uint64_t ip) { return ip >= lo && ip <= hi; });
        if (from) {
          end = pending_first;
          while (end < prev.size() && prev[end].ip != *from) ++end;
          if (end == prev.size()) from.reset();
        }
      } else {
        ++out.interrupts;
      }
      if (!from) {
        // The whole block ran: the interrupt came before the next block.
        switch (last.kind) {
          case BranchKind::kNone: from = fall; break;
          case BranchKind::kDirectJump:
          case BranchKind::kDirectCall: from = last.target; break;
          case BranchKind::kCondJump:
            from = FindResume(blocks, words, i,
                              [&](uint64_t ip) { return ip == fall || ip == last.target; });
            break;
          case BranchKind::kFarTransfer:
            from = FindResume(blocks, words, i, [](uint64_t) { return true; });
            break;
          default:
            from = FindResume(blocks, words, i,
                              [&](uint64_t ip) { return KernelHalf(ip) == kernel; });
            break;
        }
        if (!from) {
          ++out.unresolved;
          if (out.unresolved_at.size() < 16)
            out.unresolved_at.push_back(fmt::format(
                "{:#x} {} -> {:#x}{}", last.ip, static_cast<int>(last.kind), next,
                entry == KernelFacts::Entry::kFault ? " fault" : ""));
          from = last.kind == BranchKind::kDirectJump || last.kind == BranchKind::kDirectCall
                     ? last.target : fall;
        }
        end = prev.size();
      }
      if (auto s = run(prev, pending_first, end, *from); !s) return tl::unexpected(s.error());
      if (auto s = encoder.AsyncBranch(*from, next, tsc); !s) return tl::unexpected(s.error());
    }
    if (auto s = observe(prev, pending_first); !s) return tl::unexpected(s.error());
    if (auto s = follow_syscalls(entry == KernelFacts::Entry::kNone ? &last : nullptr, next); !s)
      return tl::unexpected(s.error());
    if (ended) {
      // The trace ends before the handler's first instruction.
      if (open_syscall) out.syscalls.push_back(*open_syscall);
      pending = nullptr;
      break;
    }
    pending = &insns;
    pending_first = 0;
  }
  if (pending) {
    // The last block: everything up to a final branch whose outcome nobody saw, unless the
    // plugin said where execution went (the block that stopped the recording).
    const std::vector<SysInsn>& prev = *pending;
    if (options.final_next != 0) {
      if (auto s = run(prev, pending_first, prev.size(), options.final_next); !s)
        return tl::unexpected(s.error());
    } else {
      size_t end = prev.back().kind == BranchKind::kNone ? prev.size() : prev.size() - 1;
      if (end > pending_first) {
        const SysInsn& last = prev[end - 1];
        if (auto s = run(prev, pending_first, end, last.ip + last.size); !s)
          return tl::unexpected(s.error());
      }
    }
  }
  if (started && snapshots) {
    if (auto s = cut("end"); !s) return tl::unexpected(s.error());
  } else if (started) {
    if (auto s = encoder.End(); !s) return tl::unexpected(s.error());
  }
  out.pt = snapshots ? std::vector<uint8_t>{} : encoder.bytes();
  out.stats = encoder.stats();
  out.tsc_end = tsc;
  return out;
}

}  // namespace ptprof::record
