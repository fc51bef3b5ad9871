#pragma once
// CodeBlocks answers "what runs from this address until the trace must be asked?", once per
// address: the memoised control-flow graph of the fast flow engine. A code block is the run of
// instructions from an address up to and including the first one whose successor the trace
// decides (conditional branch, return, indirect or far branch) or that ends a model block anyway
// (a direct call or jump); it records what the engine needs to move on without decoding again.
// Single instructions are cached too, for walking to an event's address one step at a time.
#include <intel-pt.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <type_traits>
#include <string>
#include <unordered_map>
#include <vector>

#include "decoders/pt/image_cache.h"
#include "sideband/x86_insn.h"
#include "src/model/piece_arena.h"
#include "src/model/result.h"
#include "src/model/zeroed_array.h"

namespace ptprof::pt::fast {

class TntRuns;
struct CodeBlock;

// The most instructions a walked block may hold (pt_block's ninsn is 16 bits).
inline constexpr uint32_t kMaxBlockInsns = 0xffff;

// The block where a TIP from some place went the last time (a one-entry memo: an indirect
// branch mostly goes where it went before); the block's own first address tells whether it is
// the one for a target.
struct TipMemo {
  const CodeBlock* next = nullptr;
};

struct CodeInsn {
  uint64_t ip = 0;
  X86Insn insn;
  int isid = 0;
  bool writes_cr3 = false;  // mov to CR3: where a TIP.PGD without an IP may bind
};

struct CodeBlock {
  uint64_t first_ip = 0;
  uint32_t ninsn = 0;  // including the last
  uint64_t last_ip = 0;
  X86Insn last;             // the instruction that ends it
  int last_isid = 0;        // the section the last instruction was read from
  bool writes_cr3 = false;  // some instruction in it moves to CR3
  // The blocks at the fall-through (not-taken) and at the direct branch target (taken), once the
  // walk has been there: the graph's edges, so that a hot loop looks nothing up.
  mutable const CodeBlock* next[2] = {nullptr, nullptr};
  // For a block a TIP decides: where the TIP went the last time.
  mutable TipMemo tip;
};
static_assert(std::is_trivially_destructible_v<CodeBlock>, "blocks go with their arena");

class CodeBlocks {
 public:
  // `images` must outlive this; the blocks are only valid for its image `image_index`.
  explicit CodeBlocks(const PtImageCache& images, size_t image_index = 0);
  ~CodeBlocks();

  // The instruction at `ip`, or null when it cannot be read in one piece from one section or
  // does not decode; `why` then says which.
  const CodeInsn* Insn(uint64_t ip, pt_exec_mode mode, std::string& why);
  // The block starting at `ip`, or null (as Insn).
  const CodeBlock* Block(uint64_t ip, pt_exec_mode mode, std::string& why);
  // Block, when why it failed does not matter.
  const CodeBlock* Block(uint64_t ip, pt_exec_mode mode) {
    std::string ignored;
    return Block(ip, mode, ignored);
  }
  // The block at `ip` that `from`'s edge `taken` (1: the branch, 0: the fall-through) leads to:
  // looked up the first time and kept on the edge.
  const CodeBlock* Edge(const CodeBlock* from, int taken, uint64_t ip, pt_exec_mode mode) {
    if (const CodeBlock* to = from->next[taken]) return to;
    return from->next[taken] = Block(ip, mode);
  }
  // The block at `ip`, where a TIP went: from `memo` when it went there the last time too, else
  // looked up and kept in `memo`.
  const CodeBlock* TipTarget(TipMemo& memo, uint64_t ip, pt_exec_mode mode) {
    if (!memo.next || memo.next->first_ip != ip) memo.next = Block(ip, mode);
    return memo.next;
  }

  size_t blocks() const { return block_memory_.size(); }

  // The TNT runs over this graph (fast/tnt_runs.h), made when first asked for.
  TntRuns& runs();

 private:
  static uint64_t Key(uint64_t ip, pt_exec_mode mode) {
    return ip ^ (static_cast<uint64_t>(mode) << 60);
  }
  bool DecodeAt(uint64_t ip, pt_exec_mode mode, CodeInsn& out, std::string& why) const;
  // DecodeAt's two steps: up to `size` bytes at `ip` (from the section visible there: `isid`),
  // their count or 0 (`why` says so); and the decode of the instruction they begin with.
  int ReadAt(uint64_t ip, uint8_t* raw, size_t size, int& isid, std::string& why) const;
  bool DecodeRead(uint64_t ip, pt_exec_mode mode, const uint8_t* raw, int read, int isid,
                  CodeInsn& out, std::string& why) const;
  // Whether code at [begin, end) may be taken in `mode` (and notes it so): not when code that
  // overlaps it was decoded in another mode. libipt's block cache keeps the decode of an address
  // in the mode it first met it in and reuses it in any other (the instructions, and the
  // block's mode, then come from the first mode's decode); that history the fast engine cannot
  // follow, so it leaves such code to libipt (`why` says where).
  bool InOneMode(uint64_t begin, uint64_t end, pt_exec_mode mode, std::string& why);
  // The code decoded so far, per mode, as disjoint [begin, end) ranges: kept from the first
  // decode in a second mode on (until then, everything is in first_mode_).
  void NoteSpan(uint64_t begin, uint64_t end, pt_exec_mode mode);

  const PtImageCache& images_;
  size_t image_index_;
  X86Decoder x86_;
  std::unordered_map<uint64_t, CodeInsn> insns_;
  // The blocks by key: open addressing, linear probing, at most half full, over blocks that never
  // move (a compiler's 122 K blocks, one malloc each in a node-based map before, were 4 K page
  // faults of a cold decode).
  struct BlockSlot {
    uint64_t key;
    CodeBlock* block;  // null: free
  };
  BlockSlot& BlockSlotOf(uint64_t key) {
    const size_t mask = block_table_.size() - 1;
    size_t i = static_cast<size_t>((key * 0x9e3779b97f4a7c15ull) >> 24) & mask;
    while (block_table_[i].block && block_table_[i].key != key) i = (i + 1) & mask;
    return block_table_[i];
  }
  void GrowBlockTable();
  ZeroedArray<BlockSlot> block_table_ = ZeroedArray<BlockSlot>(1 << 10);
  PieceArena<CodeBlock> block_memory_;
  // A direct-mapped cache in front of blocks_: most lookups of a hot loop end here.
  struct Slot {
    uint64_t key = UINT64_MAX;
    const CodeBlock* block = nullptr;
  };
  static constexpr size_t kFrontSlots = 4096;
  std::vector<Slot> front_ = std::vector<Slot>(kFrontSlots);
  std::unique_ptr<TntRuns> runs_;
  bool any_mode_ = false;  // anything decoded yet
  pt_exec_mode first_mode_ = ptem_unknown;
  bool mixed_ = false;  // code was decoded in a second mode: spans_ holds every mode's
  std::map<uint64_t, uint64_t> spans_[4];  // by pt_exec_mode: begin -> end
};

// The images of one trace with their code graph, made once and lent to the decodes of its pieces
// (PSB segments on several threads): each borrows one, so the graph a piece built is warm for a
// later piece. Sections are added when an entry is first made.
class CodeGraphPool {
 public:
  struct Entry {
    PtImageCache images{true};  // libipt's side only when a segment falls back to libipt
    CodeBlocks code{images};
    std::thread::id last_user;  // the thread that borrowed it last
    // Following tasks: the image of `images` made for each address space of the tasks, and the
    // code graph of each such image, kept for the next decode that borrows this entry (the next
    // PSB segment of a parallel decode) as the entry's own graph is.
    std::map<size_t, size_t> image_of_space;
    std::map<size_t, std::unique_ptr<CodeBlocks>> code_of_image;
  };
  // An entry, new or returned by an earlier decode (preferably one this thread had, whose graph
  // is warm in its cache); `fill` adds the sections to a new one.
  std::unique_ptr<Entry> Borrow(const std::function<Status(PtImageCache&)>& fill, Status& status);
  void Return(std::unique_ptr<Entry> entry);

 private:
  std::mutex mutex_;
  std::vector<std::unique_ptr<Entry>> free_;
};

// Whether the trace decides where execution goes after `kind` (libipt's "requires trace").
bool NeedsTrace(const X86Insn& insn);

// A direct near call or jump: where it goes is in the code, and a model block ends there.
inline bool IsDirectCallOrJump(const X86Insn& insn) {
  return (insn.kind == X86Kind::kCallNear || insn.kind == X86Kind::kJumpNear) &&
         insn.has_branch_disp;
}

// A call that leaves a return address on the return stack (a direct call to the next
// instruction, as position-independent code makes, returns nowhere).
inline bool PushesReturn(const X86Insn& insn) {
  return insn.kind == X86Kind::kCallNear && !(insn.has_branch_disp && insn.branch_disp == 0);
}

}  // namespace ptprof::pt::fast
