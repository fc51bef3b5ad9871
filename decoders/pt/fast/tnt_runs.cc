#include "decoders/pt/fast/tnt_runs.h"

#include <cstdlib>
#include <cstring>
#include <new>

#include "decoders/pt/flow_config.h"

namespace ptprof::pt::fast {

namespace {

constexpr uint32_t kMaxBlockInsns = 0xffff;  // the most a walked block may hold (pt_block's ninsn)

bool IsDirectCallOrJump(const X86Insn& insn) {
  return (insn.kind == X86Kind::kCallNear || insn.kind == X86Kind::kJumpNear) &&
         insn.has_branch_disp;
}

// A call that leaves a return address (a call to the next instruction, as position-independent
// code does, returns nowhere).
bool PushesReturn(const X86Insn& insn) {
  return insn.kind == X86Kind::kCallNear && !(insn.has_branch_disp && insn.branch_disp == 0);
}

}  // namespace

void TntRuns::Free::operator()(TntRun* run) const {
  run->~TntRun();
  std::free(run);
}

TntRuns::~TntRuns() = default;

const CodeBlock* TntRuns::Follow(const CodeBlock* from, int taken, uint64_t ip, pt_exec_mode mode) {
  if (const CodeBlock* to = from->next[taken]) return to;
  std::string ignored;
  const CodeBlock* to = code_.Block(ip, mode, ignored);
  from->next[taken] = to;
  return to;
}

const TntRun& TntRuns::Lookup(const CodeBlock* start, uint64_t state, uint64_t ret,
                              pt_exec_mode mode, bool speculative, uint64_t bits, uint32_t count) {
  const Key key{start, state, ret};
  auto it = runs_.find(key);
  if (it == runs_.end())
    it = runs_.emplace(key, Build(start, state, ret, mode, speculative, bits, count)).first;
  return *it->second;
}

TntRuns::RunPtr TntRuns::Build(const CodeBlock* start, uint64_t state, uint64_t ret,
                               pt_exec_mode mode, bool speculative, uint64_t bits,
                               uint32_t count) {
  TntRun head;
  head.start = start;
  head.state = state;
  head.ret = ret;
  std::vector<PackedEvent> blocks;
  std::vector<uint64_t> core_pushes, trailing_pushes;
  const uint8_t model_mode = static_cast<uint8_t>(ToExecMode(mode));
  const uint8_t flags = speculative ? kPackedSpeculative : 0;
  std::vector<uint64_t> stack;  // return addresses pushed inside the run, still there
  const CodeBlock* block = start;
  uint32_t pending = count;
  bool trailing = false;  // past the last bit: only direct calls and jumps go on
  for (;;) {
    if (!block || block->ninsn > kMaxBlockInsns || block->last_ip < block->first_ip ||
        block->last_ip - block->first_ip > UINT32_MAX || blocks.size() == kMaxBlocks)
      break;
    const X86Insn& last = block->last;
    const uint64_t fall_through = block->last_ip + last.length;
    uint64_t next_ip = 0;
    const CodeBlock* next = nullptr;
    BlockEnd end = X86KindToBlockEnd(last.kind);
    if (IsDirectCallOrJump(last)) {
      if (PushesReturn(last)) {
        if (stack.size() == kMaxDepth) break;
        stack.push_back(fall_through);
        if (trailing) trailing_pushes.push_back(fall_through);
        head.depth = std::max(head.depth, static_cast<uint32_t>(stack.size()));
      }
      next_ip = last.NextIp(block->last_ip);
      next = Follow(block, 1, next_ip, mode);
    } else if (!trailing && last.kind == X86Kind::kCondJump) {
      const bool taken = (bits >> (pending - 1)) & 1;
      pending -= 1;
      next_ip = taken ? last.NextIp(block->last_ip) : fall_through;
      next = Follow(block, next_ip == fall_through ? 0 : 1, next_ip, mode);
      end = next_ip == fall_through ? BlockEnd::kCondNotTaken : BlockEnd::kCondTaken;
    } else if (!trailing && last.kind == X86Kind::kRetNear) {
      // A compressed return: a taken bit, to the address the matching call pushed.
      const bool taken = (bits >> (pending - 1)) & 1;
      if (!taken) break;
      if (!stack.empty()) {
        next_ip = stack.back();
        stack.pop_back();
      } else if (blocks.empty()) {
        next_ip = ret;  // the caller's return address: the first block's, and in the key
        head.pops = true;
      } else {
        break;
      }
      pending -= 1;
      std::string ignored;
      next = code_.Block(next_ip, mode, ignored);
    } else {
      break;  // a TIP decides, or (trailing) a bit would be needed
    }
    PackedEvent packed;
    packed.first_ip_or_index = block->first_ip;
    packed.span = static_cast<uint32_t>(block->last_ip - block->first_ip);
    packed.insns = block->ninsn;
    packed.last_insn_size = last.length;
    packed.end = static_cast<uint8_t>(end);
    packed.mode = model_mode;
    packed.flags = flags;
    blocks.push_back(packed);
    if (!trailing) {
      head.core = static_cast<uint32_t>(blocks.size());
      head.bits = count - pending;
      head.core_insns += block->ninsn;
      head.core_last_kind = last.kind;
      head.core_last_ip = block->last_ip;
      head.core_last = block;
      head.core_next_ip = next_ip;
      head.core_next = next;
      head.core_depth = head.depth;
      core_pushes = stack;
    } else {
      head.trailing_insns += block->ninsn;
    }
    head.last_kind = last.kind;
    head.last_ip = block->last_ip;
    head.next_ip = next_ip;
    head.next = next;
    block = next;
    if (pending == 0) trailing = true;
  }
  if (head.core == 0) blocks.clear();
  head.size = static_cast<uint32_t>(blocks.size());
  head.core_pushes = static_cast<uint32_t>(core_pushes.size());
  head.pushes_size = head.core_pushes + static_cast<uint32_t>(trailing_pushes.size());
  const size_t bytes = sizeof(TntRun) + blocks.size() * sizeof(PackedEvent) +
                       head.pushes_size * sizeof(uint64_t);
  void* memory = std::malloc(bytes);
  if (!memory) throw std::bad_alloc();
  RunPtr run(new (memory) TntRun(head));
  if (!blocks.empty()) std::memcpy(run->blocks(), blocks.data(), blocks.size() * sizeof(PackedEvent));
  uint64_t* pushes = run->pushes();
  for (uint64_t ret : core_pushes) *pushes++ = ret;
  for (uint64_t ret : trailing_pushes) *pushes++ = ret;
  return run;
}

}  // namespace ptprof::pt::fast
