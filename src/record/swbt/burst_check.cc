#include "src/record/swbt/burst_check.h"

#include <fmt/format.h>

#include "sideband/x86_insn.h"

namespace ptprof::swbt {

namespace {

enum class Fetch { kOk, kNoFile, kUnmapped };

// The instruction at `address`, decoded from the file mapped there.
Fetch DecodeAt(const X86Decoder& decoder, const std::vector<MapsLine>& maps,
               const ReadFileFn& read_file, uint64_t address, X86Insn* insn) {
  const MapsLine* m = FindMapping(maps, address);
  if (m == nullptr) return Fetch::kUnmapped;
  if (m->path.empty() || m->path[0] != '/') return Fetch::kNoFile;
  const std::vector<uint8_t> bytes = read_file(m->path, address - m->start + m->offset, 15);
  auto decoded = decoder.Decode(bytes.data(), bytes.size(), ExecMode::k64Bit);
  if (!decoded) return Fetch::kUnmapped;
  *insn = *decoded;
  return Fetch::kOk;
}

bool IsBranch(X86Kind kind) {
  return kind == X86Kind::kCallNear || kind == X86Kind::kJumpNear ||
         kind == X86Kind::kCondJump || kind == X86Kind::kRetNear;
}

}  // namespace

void CheckBursts(const std::vector<SwbtBurst>& bursts, const std::vector<MapsLine>& maps,
                 const ReadFileFn& read_file, BurstCheckSummary& summary) {
  X86Decoder decoder;
  auto bad = [&](const SwbtBurst& burst, size_t k, const std::string& why) {
    ++summary.bad;
    if (summary.counterexamples.size() < 8)
      summary.counterexamples.push_back(fmt::format(
          "burst {} (tid {}, offset {}) branch {} {:#x}->{:#x}: {}", burst.sample.sample,
          burst.sample.tid, burst.sample.trace_offset, k, burst.sample.branches[k].from,
          burst.sample.branches[k].to, why));
  };
  for (const SwbtBurst& burst : bursts) {
    ++summary.bursts;
    uint64_t pc = burst.start_pc;
    bool pc_known = true;
    for (size_t k = 0; k < burst.sample.branches.size(); ++k) {
      const BranchRecord& r = burst.sample.branches[k];
      ++summary.branches;
      X86Insn insn;
      const Fetch fetch = DecodeAt(decoder, maps, read_file, r.from, &insn);
      if (fetch == Fetch::kNoFile) {
        ++summary.unverifiable;
        pc = r.to;
        pc_known = true;
        continue;
      }
      if (fetch != Fetch::kOk) {
        bad(burst, k, "no instruction there");
        pc_known = false;
        continue;
      }
      if (!IsBranch(insn.kind)) {
        bad(burst, k, std::string("not a branch: ") + insn.mnemonic);
        pc = r.to;
        continue;
      }
      if (insn.has_branch_disp && insn.NextIp(r.from) != r.to) {
        bad(burst, k, fmt::format("{} goes to {:#x}", insn.mnemonic, insn.NextIp(r.from)));
        pc = r.to;
        continue;
      }
      // The straight path from where the previous branch went to this one.
      bool path_ok = !pc_known;
      for (uint32_t steps = 0; pc_known && steps < 100000; ++steps) {
        if (pc == r.from) {
          path_ok = true;
          break;
        }
        X86Insn step;
        const Fetch f = DecodeAt(decoder, maps, read_file, pc, &step);
        if (f == Fetch::kNoFile) {
          path_ok = true;  // cannot follow it: not counted against the burst
          break;
        }
        if (f != Fetch::kOk || (step.kind != X86Kind::kOther && step.kind != X86Kind::kCondJump))
          break;
        pc += step.length;
      }
      if (!path_ok) {
        bad(burst, k, fmt::format("not reached by straight-line code from {:#x}", pc));
      } else {
        ++summary.verified;
      }
      pc = r.to;
      pc_known = true;
    }
  }
}

}  // namespace ptprof::swbt
