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

namespace {
constexpr uint64_t kSysRtSigreturn = 15;
constexpr size_t kSigreturnLookahead = 1 << 22;  // words searched for the end of a handler

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

size_t EventWords(uint32_t tag) {
  if (tag == sf::kTagSyscall) return sf::kSyscallWords;
  if (tag == sf::kTagSysret) return sf::kSysretWords;
  return 1;
}
}  // namespace

Result<const std::vector<QemuBlockCache::Insn>*> QemuBlockCache::Get(uint32_t id) {
  if (id >= stream_.blocks.size() || !stream_.blocks[id].defined)
    return Fail(fmt::format("QEMU stream: block {} executed but never defined", id));
  if (insns_.size() <= id) {
    insns_.resize(stream_.blocks.size());
    done_.resize(stream_.blocks.size());
  }
  if (done_[id]) return &insns_[id];
  static thread_local X86Decoder decoder;
  const QemuBlock& block = stream_.blocks[id];
  const uint8_t* code = stream_.CodeOf(block);
  const uint8_t* sizes = stream_.SizesOf(block);
  std::vector<Insn>& out = insns_[id];
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
    out.push_back({ip, insn->length, UserModeBranchKind(*insn),
                   insn->has_branch_disp ? insn->NextIp(ip) : 0});
    ip += insn->length;
    offset += insn->length;
  }
  done_[id] = 1;
  return &out;
}

namespace {

// Where an interrupted thread resumes: the first block after the next rt_sigreturn, if found.
std::optional<uint64_t> ResumeAfterSignal(const QemuStream& stream, const QemuThread& thread,
                                          size_t from) {
  const auto& words = thread.words;
  bool after_sigreturn = false;
  for (size_t i = from; i < words.size() && i < from + kSigreturnLookahead;) {
    const uint32_t word = words[i];
    if (word >= sf::kFirstTag) {
      if (word == sf::kTagSyscall && i + 2 < words.size() && Word64(words, i + 1) == kSysRtSigreturn)
        after_sigreturn = true;
      i += EventWords(word);
      continue;
    }
    if (after_sigreturn) {
      if (word < stream.blocks.size() && stream.blocks[word].defined)
        return stream.blocks[word].vaddr;
      return std::nullopt;
    }
    ++i;
  }
  return std::nullopt;
}

}  // namespace

Result<QemuThreadTrace> EncodeQemuThread(const QemuStream& stream, const QemuThread& thread,
                                         QemuBlockCache& cache, const QemuFlowOptions& options,
                                         uint64_t tsc_begin) {
  QemuThreadTrace out;
  out.tid = thread.tid;
  out.tsc_begin = tsc_begin;
  pt::TraceEncoder encoder(options.encoder);
  uint64_t tsc = tsc_begin;
  bool started = false;
  std::optional<QemuBlockCache::Insn> pending;  // executed; where it went is not known yet
  const auto& words = thread.words;

  const bool snapshots = options.buffer_size > 0;
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
  auto step = [&](const QemuBlockCache::Insn& insn, uint64_t next) -> Status {
    pt::ExecutedInsn executed{insn.ip, insn.size, insn.kind, next, insn.target};
    if (options.keep_ips) out.ips.push_back(insn.ip);
    ++out.insns;
    tsc += options.cycles_per_insn;
    if (auto s = encoder.Step(executed, tsc); !s) return s;
    if (snapshots) {
      // The ring wraps: only the newest buffer_size bytes survive (trimmed in large steps).
      if (encoder.bytes().size() > 2 * options.buffer_size + 4096)
        encoder.DropPrefix(encoder.bytes().size() - options.buffer_size);
      if (options.snapshot_every_insns && out.insns % options.snapshot_every_insns == 0)
        return cut(fmt::format("insns={}", options.snapshot_every_insns));
    }
    return {};
  };
  // `insn` executed and execution continued at `next`: word index `at` is where the stream goes on.
  auto deliver = [&](const QemuBlockCache::Insn& insn, uint64_t next, size_t at) -> Status {
    const uint64_t fall = insn.ip + insn.size;
    uint64_t interrupted = 0;  // where a signal interrupted the flow, 0 for none
    switch (insn.kind) {
      case BranchKind::kCondJump:
        if (next != fall && next != insn.target) {
          auto resume = ResumeAfterSignal(stream, thread, at);
          interrupted = (resume && *resume == insn.target) ? insn.target : fall;
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
      return step(insn, next);
    }
    ++out.signals;
    if (auto s = step(insn, interrupted); !s) return s;
    return encoder.AsyncBranch(interrupted, next, tsc);
  };

  for (size_t i = 0; i < words.size();) {
    const uint32_t word = words[i];
    if (word >= sf::kFirstTag) {
      if (word == sf::kTagSyscall && i + 2 < words.size() && pending &&
          pending->kind == BranchKind::kSyscall) {
        // The syscall instruction is complete: tracing stops here whatever comes next.
        if (auto s = step(*pending, pending->ip + pending->size); !s) return tl::unexpected(s.error());
        pending.reset();
        const uint64_t number = Word64(words, i + 1);
        for (uint64_t trigger : options.snapshot_syscalls)
          if (snapshots && trigger == number)
            if (auto s = cut(fmt::format("syscall={}", number)); !s) return tl::unexpected(s.error());
      }
      i += EventWords(word);
      continue;
    }
    ++i;
    auto block = cache.Get(word);
    if (!block) return tl::unexpected(block.error());
    const auto& insns = **block;
    if (insns.empty()) continue;
    size_t first = 0;
    if (!started) {
      if (auto s = encoder.Begin(insns[0].ip, ExecMode::k64Bit, tsc); !s) return tl::unexpected(s.error());
      started = true;
    }
    if (pending) {
      if (pending->kind == BranchKind::kNone && pending->ip == insns[0].ip) {
        // A rep-string instruction runs as its own block once per iteration: one instruction.
        ++out.rep_repeats;
        first = 1;
        if (insns.size() == 1) continue;
      }
      if (auto s = deliver(*pending, insns[first].ip, i); !s) return tl::unexpected(s.error());
      pending.reset();
    }
    for (size_t k = first; k + 1 < insns.size(); ++k) {
      if (insns[k].kind == BranchKind::kNone && !snapshots && !encoder.NeedsStep()) {
        // Straight-line code inside a block needs no packet: count it (the hot path).
        if (options.keep_ips) out.ips.push_back(insns[k].ip);
        ++out.insns;
        tsc += options.cycles_per_insn;
        encoder.CountStraightLine(1);
        continue;
      }
      if (auto s = deliver(insns[k], insns[k + 1].ip, i); !s) return tl::unexpected(s.error());
    }
    pending = insns.back();
  }
  if (pending) {
    // The thread's last instruction: a syscall (exit) or an instruction that falls through.
    // A branch whose outcome nobody saw is left out (the trace ends before it).
    const uint64_t fall = pending->ip + pending->size;
    if (pending->kind == BranchKind::kSyscall || pending->kind == BranchKind::kNone)
      if (auto s = step(*pending, fall); !s) return tl::unexpected(s.error());
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
