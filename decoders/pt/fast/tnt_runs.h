#pragma once
// TntRuns answers "starting at this block with these TNT bits pending, which blocks run, and
// where does the code stand after them?" once per (block, bits), so that the fast engine moves
// through a whole TNT packet's worth of blocks with one lookup and one copy instead of one
// lookup, one bit and one model call per block (libxdc caches TNT runs per code location for
// coverage; this cache keeps the full flow: every block with its instruction count and end).
//
// A run walks the code graph exactly as FastFlowDecoder's plain walk would: direct calls and
// jumps without trace, a conditional branch per bit, a compressed return per bit (to a return
// address pushed inside the run, or to the addresses on top of the caller's return stack, up to
// two, which are then part of the key). It stops before anything else: a branch that needs a
// TIP, any other return to an address pushed before the run (a run keyed with fewer than two of
// the caller's addresses says so: the run keyed with one more goes on), a return whose bit says
// not taken (an error the plain walk reports), code it cannot read, a block the model cannot
// hold. After the last bit it goes on through direct calls and jumps (the trailing part), which
// the caller takes only when no event waits there; the trailing part may end with a branch a TIP
// decides (an indirect jump or call, a far branch), which the caller asks the trace for.
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <type_traits>
#include <vector>

#include "decoders/pt/fast/code_blocks.h"
#include "decoders/pt/fast/return_stack.h"
#include "src/model/block_batch.h"
#include "src/model/huge_slabs.h"
#include "src/model/run_ref.h"
#include "src/model/zeroed_array.h"

namespace ptprof::pt::fast {

// Where a part of a run stops: its core (the blocks walked while bits are pending) or the whole
// run (the trailing part included).
// (Small fields: a large program has a few hundred thousand runs, each in fresh memory.)
// (The address of the last instruction is not kept: the run's blocks()[blocks - 1] holds it,
// TntRun::LastIp.)
struct RunStop {
  const CodeBlock* last = nullptr;  // the code block of blocks()[blocks - 1]
  // Where the code goes after it, with its block when the graph has one (not known when the
  // run ends in a TIP).
  uint64_t next_ip = 0;
  const CodeBlock* next = nullptr;
  uint32_t insns = 0;  // instructions in those blocks (at most kMaxBlocks of kMaxBlockInsns)
  uint8_t blocks = 0;  // blocks()[0, blocks)
  uint8_t ops = 0;     // ops()[0, ops): a return address pushed, or kPop (at most one a block)
  X86Kind last_kind = X86Kind::kOther;
};
static_assert(sizeof(RunStop) == 32);

// The caller's return addresses a run's key holds: the one on top of the caller's return stack
// (0: none, the run stops before returning past its own calls) and, with it, the one below
// (0: none, it stops before a second such return). The run returns to them in that order.
struct CallerKey {
  CallerKey(uint64_t top = 0, uint64_t second = 0) : ret(top), ret2(second) {}
  uint64_t ret;
  uint64_t ret2;
  bool operator==(const CallerKey&) const = default;
};

// The first 40 bytes of every run: its key and flags. A run that `extends` is kept as this head
// alone (the table's entry that sends a lookup one key deeper): the run keyed with one more of
// the caller's addresses is taken in its place whenever the caller's stack has that address, and
// where it has not, the run walked as far as it goes without it is kept under the same key with
// the state marked (TntRuns::ShallowState), built when first needed. (A fifth of a compiler's
// runs extend; their heads, operations and blocks were 16 % of its runs' memory.)
struct RunHead {
  // The key: the first block, the pending bits (count, values, speculative) and the caller's
  // return addresses the run returns to when it returns past its own calls (CallerKey: up to
  // two; it stops before a return past them). A run whose first block returns has one at least.
  const CodeBlock* start = nullptr;
  uint64_t state = 0;
  CallerKey caller;
  bool pops = false;         // the first block returns: one address comes off the caller's stack
  bool ends_in_tip = false;  // the last block's branch needs a TIP
  uint8_t bits = 0;          // bits taken by the core (at most 63)
  // Keyed with less than two of the caller's addresses, the run stopped before a return past
  // them with bits left: the run keyed with one more (when the caller has it) goes on. Such a
  // run is a head alone.
  bool extends = false;
  bool whole = false;  // the core takes all the key's bits
  bool next_returns = false;  // the block at all.next ends in a near return
  // The run goes on past its last bit (direct calls and jumps, perhaps a branch a TIP decides):
  // its core stops before all of it, and a RunTail lies right before the header. (A run that
  // ends in a TIP always does.)
  bool trails = false;
};
static_assert(sizeof(RunHead) == 40 && std::is_trivially_destructible_v<RunHead>);

// What a run that `trails` keeps right before its header: where its core stops, and where the
// TIP went the last time when the run ends in one (read by the steady loop only for a run it
// finds in the table, or that ends in a TIP).
struct RunTail {
  RunStop core;
  mutable TipMemo tip;
};

// One run, in one allocation: (when it `trails`) a RunTail, then this header, then its return
// stack operations (the run's calls and returns, in order), then its packed blocks. (The steady
// loop reads the header, replays the operations and copies the blocks: in that order the run's
// lines are read front to back, and where they begin does not depend on the tail.) Never one
// that `extends` (a RunHead alone).
struct TntRun : RunHead {
  RunStop all;
  // The model's consumer's note on this run (BatchRun::note), in the line the steady loop reads.
  mutable RunNote note;
  // The runs taken right after this one the last kFollows times, the latest first (loops repeat
  // them, and a loop whose TNT packets alternate between a few patterns repeats a few), with
  // a tag of their keys' states (StateTag): checked before the table, whose lookup misses the
  // cache, and told apart by their tags without reading them (a run whose tag matches is then
  // checked whole). Never a run with an empty core; tag 0: none (no state's tag is 0).
  // (With the fields before them, the 128 bytes the steady loop reads for every run.)
  static constexpr int kFollows = 4;
  mutable const TntRun* follows[kFollows] = {};
  mutable uint16_t follow_tags[kFollows] = {};

  // Where the core stops: before the trailing part, else where all of it does. (Empty: no run.)
  const RunStop& core() const { return trails ? tail()->core : all; }
  // Whether the core is empty: the run takes nothing, and the plain walk goes on.
  bool empty() const { return all.blocks == 0; }
  // For a run that ends in a TIP: where the TIP went the last time.
  TipMemo& tip() const { return tail()->tip; }

  // A 16-bit tag of a key's state (never 0): equal states have equal tags.
  static uint16_t StateTag(uint64_t state) {
    const uint64_t h = state * 0x9e3779b97f4a7c15ull;
    return static_cast<uint16_t>(h >> 48) | 1;
  }
  // The address of the last instruction of the blocks up to `stop` (the run's core or all of
  // it; not empty).
  uint64_t LastIp(const RunStop& stop) const { return LastIpOf(blocks(), stop.blocks); }
  // The same, of a run's `blocks` (its blocks(), found already) up to the `count`th.
  static uint64_t LastIpOf(const RunBlock* blocks, uint32_t count) {
    const RunBlock& last = blocks[count - 1];
    return last.first_ip + last.span;
  }

  // Whether the caller's addresses in the key are those on its stack now, `tops` (none: any
  // stack).
  bool FitsCaller(const CallerTops& tops) const {
    return caller.ret == 0 ||
           (tops.depth != 0 && caller.ret == tops.top &&
            (caller.ret2 == 0 || (tops.depth > 1 && caller.ret2 == tops.second)));
  }
  // The same, with the caller's stack (its top read only when the key holds an address).
  bool FitsCaller(const ReturnStack& stack) const {
    return caller.ret == 0 || FitsCaller(stack.Caller());
  }
  // Whether this run walks what the plain walk would from `at` with `pending` bits (a State)
  // and `tops` on the caller's return stack.
  bool Fits(const CodeBlock* at, uint64_t pending, const CallerTops& tops) const {
    return start == at && state == pending && FitsCaller(tops);
  }
  // The follow that Fits (which then becomes the latest), reading only those whose key's state
  // is `pending`; null when none does.
  const TntRun* FollowFor(const CodeBlock* at, uint64_t pending,
                          const ReturnStack& stack) const {
    const uint16_t tag = StateTag(pending);
    for (int k = 0; k < kFollows; ++k) {
      if (follow_tags[k] != tag) continue;
      const TntRun* run = follows[k];
      if (run->start != at || run->state != pending || !run->FitsCaller(stack)) continue;
      if (k != 0) MoveFirst(k, run, pending);
      return run;
    }
    return nullptr;
  }
  // The first follow whose key's state has the tag of `pending` (the likely next run, to start
  // loading it), nothing changed; null when none has it.
  const TntRun* FollowWithState(uint64_t pending) const {
    const uint16_t tag = StateTag(pending);
    for (int k = 0; k < kFollows; ++k)
      if (follow_tags[k] == tag) return follows[k];
    return nullptr;
  }
  // Notes `run` (its core not empty) as taken right after this one. Written only when it
  // changes: the line is shared with threads expanding this run.
  void Followed(const TntRun* run) const {
    if (follows[0] == run) return;
    int k = 1;
    while (k < kFollows - 1 && follows[k] != run) ++k;
    MoveFirst(k, run, run->state);
  }
  // Makes `run` (whose key's state is `state`) the latest follow, those before slot `k` (the
  // slot it had, or the last) moving one down.
  void MoveFirst(int k, const TntRun* run, uint64_t state) const {
    static_assert(kFollows == 4);
    switch (k) {
      case 3: follows[3] = follows[2]; follow_tags[3] = follow_tags[2]; [[fallthrough]];
      case 2: follows[2] = follows[1]; follow_tags[2] = follow_tags[1]; [[fallthrough]];
      case 1: follows[1] = follows[0]; follow_tags[1] = follow_tags[0]; break;
      default: break;
    }
    follows[0] = run;
    follow_tags[0] = StateTag(state);
  }
  const TntRun* follow() const { return follows[0]; }  // the latest

  // The blocks, for the model: each one's end resolved by the next (the last one's by where the
  // run goes), mode and flags set; the model stamps them with a tsc and offset.
  const RunBlock* blocks() const { return reinterpret_cast<const RunBlock*>(ops() + all.ops); }
  RunBlock* blocks() { return reinterpret_cast<RunBlock*>(ops() + all.ops); }
  const uint64_t* ops() const { return reinterpret_cast<const uint64_t*>(this + 1); }
  uint64_t* ops() { return reinterpret_cast<uint64_t*>(this + 1); }
  // The bytes a run takes, tail to blocks, and where its header lies in them.
  static size_t Bytes(bool trails, size_t ops, size_t blocks) {
    return HeaderAt(trails) + sizeof(TntRun) + ops * sizeof(uint64_t) + blocks * sizeof(RunBlock);
  }
  static size_t HeaderAt(bool trails) { return trails ? sizeof(RunTail) : 0; }
  // The RunTail right before the header (only when the run `trails`).
  RunTail* tail() const {
    return reinterpret_cast<RunTail*>(
        reinterpret_cast<std::byte*>(const_cast<TntRun*>(this)) - sizeof(RunTail));
  }
  static constexpr uint64_t kPop = ~uint64_t{0};
};
static_assert(sizeof(TntRun) % alignof(uint64_t) == 0 && alignof(RunBlock) <= alignof(uint64_t));
static_assert(sizeof(RunHead) + sizeof(RunStop) + sizeof(RunNote) +
                      TntRun::kFollows * (sizeof(TntRun*) + sizeof(uint16_t)) ==
                  128 &&
              sizeof(TntRun) == 128 && sizeof(RunTail) == 40 && alignof(RunTail) <= alignof(TntRun),
              "a run's header: what the steady loop reads for every run in two lines' worth");
static_assert(std::is_trivially_destructible_v<TntRun>, "runs are freed with their chunks");

// The last instruction's kind of a run's block (a run holds only direct calls and jumps,
// conditional branches and near returns, which its end tells apart).
inline X86Kind RunBlockKind(const RunBlock& block) {
  switch (static_cast<BlockEnd>(block.end)) {
    case BlockEnd::kCall: return X86Kind::kCallNear;
    case BlockEnd::kJump: return X86Kind::kJumpNear;
    case BlockEnd::kReturn: return X86Kind::kRetNear;
    default: return X86Kind::kCondJump;
  }
}

class TntRuns {
 public:
  // Blocks a run holds at most (a batch of the model takes it whole).
  static constexpr uint32_t kMaxBlocks = 96;
  static_assert(kMaxBlocks <= UINT8_MAX && uint64_t{kMaxBlocks} * kMaxBlockInsns <= UINT32_MAX,
                "RunStop's fields hold a run's counts");
  // Return addresses a run's own calls may stack up (the return stack holds 64, so the run's
  // returns always find their own calls' addresses there).
  static constexpr uint32_t kMaxDepth = 32;

  explicit TntRuns(CodeBlocks& code);
  ~TntRuns();
  TntRuns(const TntRuns&) = delete;
  TntRuns& operator=(const TntRuns&) = delete;

  // Names these runs' memory in the process, for as long as it lives (BlockBatch::run_source):
  // never 0, never given to another TntRuns.
  uint64_t id() const { return id_; }

  // The run from `start` (a block that ends in a conditional branch or a return) with `count`
  // bits pending (1 to 63), the next one the highest of the low `count` of `bits`. Its core is
  // empty when the first block cannot be walked this way.
  // `caller` holds the address on top of the caller's return stack, always given when `start`
  // ends in a return, else given for the run that goes on where the run keyed without it
  // `extends`; and the one below it for the run that goes on where the run keyed with the top
  // one alone `extends`. Where the run of this key extends, the run walked as far as it goes
  // with no more of the caller's addresses (Head says whether it extends).
  const TntRun& Find(const CodeBlock* start, CallerKey caller, pt_exec_mode mode,
                     bool speculative, uint64_t bits, uint32_t count) {
    const uint64_t state = State(bits, count, speculative);
    const RunHead* run = &Head(start, state, caller, mode, speculative, bits, count);
    if (run->extends)
      run = &Head(start, ShallowState(state), caller, mode, speculative, bits, count);
    return static_cast<const TntRun&>(*run);
  }
  // The head of the run of this key, with the key's state already made (State, or
  // ShallowState), built when it is not yet: a TntRun unless it `extends`.
  const RunHead& Head(const CodeBlock* start, uint64_t state, CallerKey caller, pt_exec_mode mode,
                      bool speculative, uint64_t bits, uint32_t count) {
    const size_t i = SlotOf(start, state, caller);
    if (const RunHead* run = table_[i]) return *run;
    return Add(i, start, state, caller, mode, speculative, bits, count);
  }

  // The head of the run of this key when one was built, else null (nothing is built).
  const RunHead* Known(const CodeBlock* start, uint64_t state, CallerKey caller) const {
    return table_[SlotOf(start, state, caller)];
  }
  // The key one level deeper than `run`'s, which `extends`, when `tops` has the address it
  // needs; false when it has not (the run walked without it, under `run`'s key with the state
  // marked, is then the run to take).
  static bool DeeperKey(const RunHead& run, const CallerTops& tops, CallerKey& deeper) {
    if (run.caller.ret == 0) {
      if (tops.depth == 0) return false;
      deeper = CallerKey(tops.top);
      return true;
    }
    if (tops.depth < 2) return false;
    deeper = CallerKey(run.caller.ret, tops.second);
    return true;
  }
  // The key's state marked for the run walked with no more of the caller's addresses than its
  // key holds where the run of the key itself `extends` (bit 62: no state has it).
  static constexpr uint64_t ShallowState(uint64_t state) { return state | kShallow; }
  // The run to take from `start` (which ends in a return when `returns`) with `state` pending
  // and `tops` on the caller's return stack: keyed with as many of the caller's addresses as its
  // walk returns to, one key deeper while a run `extends` and `tops` has the address. Among the
  // runs built; null when one on the way is not. (Inline: the steady loop asks it for every run
  // its follows do not predict.)
  [[gnu::always_inline]] const TntRun* KnownFor(const CodeBlock* start, uint64_t state,
                                                bool returns, const CallerTops& tops) const {
    const RunHead* run = Known(start, state, FirstKey(returns, tops));
    CallerKey deeper;
    while (run && run->extends) {
      run = DeeperKey(*run, tops, deeper) ? Known(start, state, deeper)
                                          : Known(start, ShallowState(state), run->caller);
    }
    return static_cast<const TntRun*>(run);
  }
  // KnownFor, building the runs it needs (the pending bits as Find takes them).
  const TntRun& FindFor(const CodeBlock* start, uint64_t state, bool returns,
                        const CallerTops& tops, pt_exec_mode mode, bool speculative,
                        uint64_t bits, uint32_t count) {
    const RunHead* run =
        &Head(start, state, FirstKey(returns, tops), mode, speculative, bits, count);
    CallerKey deeper;
    while (run->extends) {
      run = DeeperKey(*run, tops, deeper)
                ? &Head(start, state, deeper, mode, speculative, bits, count)
                : &Head(start, ShallowState(state), run->caller, mode, speculative, bits, count);
    }
    return static_cast<const TntRun&>(*run);
  }

  // Starts loading the run in the table's slot where KnownFor begins to look for this key (most
  // often its run): the slot is read, and the run's first lines prefetched (a prefetch never
  // faults, so an empty slot's null needs no test that would wait for the read).
  void PrefetchSlot(const CodeBlock* start, uint64_t state, bool returns,
                    const CallerTops& tops) const {
    const char* run = reinterpret_cast<const char*>(
        table_[Hash(start, state, FirstKey(returns, tops)) & mask_]);
    for (int line = 0; line < 4; ++line) __builtin_prefetch(run + 64 * line);
  }

  // The pending bits as a run's key holds them.
  static constexpr uint64_t State(uint64_t bits, uint32_t count, bool speculative) {
    return (bits & ((uint64_t{1} << count) - 1)) | (uint64_t{count} << 56) |
           (uint64_t{speculative} << 63);
  }

  // State for the bits of a TNT-8 packet (its byte: even, above 2), all pending.
  static uint64_t Tnt8State(uint8_t byte, bool speculative);
  // How many bits a state holds.
  static uint32_t StateBits(uint64_t state) { return (state >> 56) & 0x7f; }

  size_t size() const { return size_; }

 private:
  // The first key to look for: the caller's top address when the first block returns, else none.
  static CallerKey FirstKey(bool returns, const CallerTops& tops) {
    return returns ? CallerKey(tops.top) : CallerKey();
  }
  static constexpr uint64_t kShallow = uint64_t{1} << 62;
  static size_t Hash(const CodeBlock* start, uint64_t state, const CallerKey& caller) {
    return Hash(start, state ^ caller.ret ^ (caller.ret2 * 0xff51afd7ed558ccdull));
  }
  static size_t Hash(const CodeBlock* start, uint64_t state) {
    const uint64_t h = (reinterpret_cast<uintptr_t>(start) >> 4) * 0x9e3779b97f4a7c15ull ^
                       state * 0xc2b2ae3d27d4eb4full;
    return static_cast<size_t>(h ^ (h >> 29));
  }
  // The table's slot holding the run of this key, or the empty one where it goes (open
  // addressing, linear probing: the table holds the runs, each run its key).
  size_t SlotOf(const CodeBlock* start, uint64_t state, const CallerKey& caller) const {
    size_t i = Hash(start, state, caller) & mask_;
    for (const RunHead* run; (run = table_[i]) != nullptr; i = (i + 1) & mask_)
      if (run->start == start && run->state == state && run->caller == caller) break;
    return i;
  }
  // Builds the run for an empty slot `i` of the table and keeps it there (growing the table).
  const RunHead& Add(size_t i, const CodeBlock* start, uint64_t state, CallerKey caller,
                    pt_exec_mode mode, bool speculative, uint64_t bits, uint32_t count);
  void Grow();
  // The run of this key (a head alone when it extends; never when its state is ShallowState's).
  RunHead* Build(const CodeBlock* start, uint64_t state, CallerKey caller, pt_exec_mode mode,
                bool speculative, uint64_t bits, uint32_t count);
  // `bytes` for a run, carved from huge-page slabs (src/model/huge_slabs.h; a run larger than a
  // slab's quarter gets memory of its own): the runs are never freed one by one, and lie in the
  // order they were built. The memory is not zeroed: a large program's runs take tens of MB
  // that were faulted in by the zeroing before.
  void* Allocate(size_t bytes);
  CodeBlocks& code_;
  const uint64_t id_;
  // A power of two, at most half full; it grows in huge pages (src/model/zeroed_array.h).
  ZeroedArray<RunHead*> table_ = ZeroedArray<RunHead*>(1 << 12);
  HugeSlabs slabs_;
  std::vector<std::unique_ptr<std::byte[]>> large_;  // runs too large for a slab
  // The builder's scratch: the blocks, return stack operations and own stack of the run being
  // built.
  std::vector<RunBlock> blocks_;
  std::vector<uint64_t> ops_;
  std::vector<uint64_t> stack_;
  size_t mask_ = (1 << 12) - 1;
  size_t size_ = 0;
};

// (The bits pending come from one TNT packet: at most 47, a long TNT packet's.)
static_assert((TntRuns::State(~uint64_t{0}, 47, true) & TntRuns::ShallowState(0)) == 0,
              "a state never has ShallowState's mark");

// TntRuns::State of each byte's TNT-8 bits, not speculative (0 for bytes no TNT-8 packet has).
inline constexpr std::array<uint64_t, 256> kTnt8States = [] {
  std::array<uint64_t, 256> states{};
  for (unsigned byte = 4; byte < 256; byte += 2) {
    const unsigned payload = byte >> 1;
    const unsigned stop = 31 - static_cast<unsigned>(std::countl_zero(payload));
    states[byte] = TntRuns::State(payload, stop, false);
  }
  return states;
}();

inline uint64_t TntRuns::Tnt8State(uint8_t byte, bool speculative) {
  return kTnt8States[byte] | (uint64_t{speculative} << 63);
}

}  // namespace ptprof::pt::fast
