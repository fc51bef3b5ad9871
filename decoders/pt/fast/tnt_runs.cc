#include "decoders/pt/fast/tnt_runs.h"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <new>

#include "decoders/pt/flow_config.h"

namespace ptprof::pt::fast {

namespace {

std::atomic<uint64_t> last_runs_id{0};

}  // namespace

TntRuns::TntRuns(CodeBlocks& code) : code_(code), id_(++last_runs_id) {}

TntRuns::~TntRuns() = default;

void* TntRuns::Allocate(size_t bytes) {
  if (bytes > HugeSlabs::kSlabBytes / 4) {
    large_.push_back(std::make_unique_for_overwrite<std::byte[]>(bytes));
    return large_.back().get();
  }
  return slabs_.Carve(bytes, alignof(TntRun));  // packed one after the other, as built
}

const RunHead& TntRuns::Add(size_t i, const CodeBlock* start, uint64_t state, CallerKey caller,
                            pt_exec_mode mode, bool speculative, uint64_t bits, uint32_t count) {
  table_[i] = Build(start, state, caller, mode, speculative, bits, count);
  const RunHead& run = *table_[i];
  if (++size_ * 2 > table_.size()) Grow();
  return run;
}

void TntRuns::Grow() {
  ZeroedArray<RunHead*> old = std::move(table_);
  table_ = ZeroedArray<RunHead*>(old.size() * 2, Pages::kFaultedIn);
  mask_ = table_.size() - 1;
  for (RunHead* run : old) {
    if (!run) continue;
    size_t i = Hash(run->start, run->state, run->caller) & mask_;
    while (table_[i]) i = (i + 1) & mask_;
    table_[i] = run;
  }
}

RunHead* TntRuns::Build(const CodeBlock* start, uint64_t state, CallerKey caller,
                        pt_exec_mode mode, bool speculative, uint64_t bits, uint32_t count) {
  // Walked as far as it goes with the caller's addresses in the key: it never extends.
  const bool shallow = (state & kShallow) != 0;
  TntRun head;
  RunStop core;  // where the blocks walked while bits are pending stop
  head.start = start;
  head.state = state;
  head.caller = caller;
  // The caller's addresses the run may return to, in order.
  const uint32_t caller_addresses = caller.ret == 0 ? 0 : caller.ret2 == 0 ? 1 : 2;
  std::vector<RunBlock>& blocks = blocks_;
  std::vector<uint64_t>& ops = ops_;
  blocks.clear();
  ops.clear();
  const uint8_t model_mode = static_cast<uint8_t>(ToExecMode(mode));
  const uint8_t flags = speculative ? kPackedSpeculative : 0;
  std::vector<uint64_t>& stack = stack_;  // return addresses pushed inside the run, still there
  stack.clear();
  // A call's return address onto the run's own stack (false: the run stacks up too much).
  auto push = [&](uint64_t ret) {
    if (stack.size() == kMaxDepth) return false;
    stack.push_back(ret);
    ops.push_back(ret);
    return true;
  };
  const CodeBlock* block = start;
  uint32_t pending = count;
  bool trailing = false;  // past the last bit: only direct calls and jumps go on
  uint32_t caller_pops = 0;  // returns to the caller's addresses
  uint64_t insns = 0;
  for (;;) {
    if (!block || block->ninsn > kMaxBlockInsns || block->last_ip < block->first_ip ||
        block->last_ip - block->first_ip > UINT32_MAX || blocks.size() == kMaxBlocks)
      break;
    const X86Insn& last = block->last;
    const uint64_t fall_through = block->last_ip + last.length;
    uint64_t next_ip = 0;
    const CodeBlock* next = nullptr;
    BlockEnd end = X86KindToBlockEnd(last.kind);
    bool tip = false;
    if (IsDirectCallOrJump(last)) {
      if (PushesReturn(last) && !push(fall_through)) break;
      next_ip = last.NextIp(block->last_ip);
      next = code_.Edge(block, 1, next_ip, mode);
    } else if (!trailing && last.kind == X86Kind::kCondJump) {
      const bool taken = (bits >> (pending - 1)) & 1;
      pending -= 1;
      next_ip = taken ? last.NextIp(block->last_ip) : fall_through;
      next = code_.Edge(block, next_ip == fall_through ? 0 : 1, next_ip, mode);
      end = next_ip == fall_through ? BlockEnd::kCondNotTaken : BlockEnd::kCondTaken;
    } else if (!trailing && last.kind == X86Kind::kRetNear) {
      // A compressed return: a taken bit, to the address the matching call pushed.
      const bool taken = (bits >> (pending - 1)) & 1;
      if (!taken) break;
      if (!stack.empty()) {
        next_ip = stack.back();
        stack.pop_back();
        ops.push_back(TntRun::kPop);
      } else if (caller_pops < caller_addresses) {
        // The caller's return address, in the key: the first block's return takes it before the
        // run's operations, a later one in their order.
        next_ip = caller_pops == 0 ? caller.ret : caller.ret2;
        if (blocks.empty()) head.pops = true;
        else ops.push_back(TntRun::kPop);
        ++caller_pops;
      } else {
        head.extends = !shallow && caller_addresses < 2 && !blocks.empty();
        break;
      }
      pending -= 1;
      next = code_.Block(next_ip, mode);
    } else if (trailing && last.kind != X86Kind::kCondJump && last.kind != X86Kind::kRetNear) {
      // A TIP decides where this one goes: the run ends with it. (An indirect call still pushes.)
      if (PushesReturn(last) && !push(fall_through)) break;
      tip = true;
    } else {
      break;  // a TIP decides while bits are pending, or (trailing) a bit would be needed
    }
    RunBlock packed;
    packed.first_ip = block->first_ip;
    packed.span = static_cast<uint32_t>(block->last_ip - block->first_ip);
    packed.insns = block->ninsn;
    packed.last_insn_size = last.length;
    packed.end = static_cast<uint8_t>(end);
    packed.mode = model_mode;
    packed.flags = flags;
    blocks.push_back(packed);
    insns += block->ninsn;
    const RunStop stop{block,
                       next_ip,
                       next,
                       static_cast<uint32_t>(insns),
                       static_cast<uint8_t>(blocks.size()),
                       static_cast<uint8_t>(ops.size()),
                       last.kind};
    if (!trailing) {
      core = stop;
      head.bits = static_cast<uint8_t>(count - pending);
      head.whole = pending == 0;
    }
    head.all = stop;
    head.ends_in_tip = tip;
    if (tip) break;
    block = next;
    if (pending == 0) trailing = true;
  }
  if (core.blocks == 0) {
    blocks.clear();
    ops.clear();
    head.all = RunStop();
    head.extends = false;
    head.whole = false;
  }
  // Taken only through the runs keyed deeper, or the shallow one: its head alone.
  if (head.extends) return new (Allocate(sizeof(RunHead))) RunHead(head);
  head.trails = head.all.blocks != core.blocks;
  head.next_returns = !head.ends_in_tip && head.all.next &&
                      head.all.next->last.kind == X86Kind::kRetNear;
  auto* memory =
      static_cast<std::byte*>(Allocate(TntRun::Bytes(head.trails, ops.size(), blocks.size())));
  if (head.trails) new (memory) RunTail{core, TipMemo{}};
  TntRun* run = new (memory + TntRun::HeaderAt(head.trails)) TntRun(head);
  if (!blocks.empty()) std::memcpy(run->blocks(), blocks.data(), blocks.size() * sizeof(RunBlock));
  if (!ops.empty()) std::memcpy(run->ops(), ops.data(), ops.size() * sizeof(uint64_t));
  return run;
}

}  // namespace ptprof::pt::fast
