// CallStackBuilder answers "which function was each instruction executed in, below which callers?"
// for a decoded flow: a shadow call stack per thread (or per CPU when the trace has no threads)
// fed by the blocks' ends (call/return, syscall/sysret, interrupt/iret, jumps into other
// functions), which grows one CallTree per thread. Each block's instructions and time (from its
// start to the start of the thread's next block) go to the frame that executed it.
//
// Real flows break the simple push/pop picture; every repair is counted (RepairCounts,
// stack_repairs.h):
// - a return with no frame to return to (the trace started inside a call chain): the returned-to
//   function becomes a new outermost frame, a synthetic caller (returns_above_start);
// - a jump to the entry of another function: the frame's function changes (tail_calls);
// - a return or jump into a function further up the stack (longjmp, exception unwinding): the
//   frames above it are popped (unwinds, frames_unwound);
// - a return to an address no frame expects: the top frame's function changes (unmatched_returns);
// - sysret/iret without a syscall/interrupt frame (unmatched_kernel_exits);
// - a gap (overflow, desync): the thread's stack is cleared and restarts at the next block
//   (gap_resets);
// - a call to a label inside the calling function (retpolines, get-pc thunks) pushes no frame,
//   and the return that consumes it is an indirect jump (local_calls).
// Syscalls and interrupts push a frame named after the kernel entry symbol; sysret/iret pop to it.
// A syscall whose kernel side is not traced (user-only traces: the flow resumes right after the
// syscall instruction) is pushed and popped at the resume, with the kernel time as its time.
//
// Observers (CallStackObserver) see every push, pop, cost and reset with the thread's counters,
// or, while they listen to kernel entries only, the pushes of syscall and interrupt frames.
//
// The builder takes its stream in parts (PartedSink) when its observers can too: a part's lane
// begins on stand-ins for the frames it cannot know, guesses what it reads of them, and the fold
// checks the guesses against the real stack (call_stack_parts.cc).
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "sideband/symbol_table.h"
#include "src/analyses/support/call_tree.h"
#include "src/analyses/support/stack_repairs.h"
#include "src/model/parted_sink.h"

namespace ptprof {

enum class FrameKind : uint8_t {
  kStart,      // the outermost frame of a thread's stack: where the trace (or a gap) started
  kCaller,     // a synthetic caller: a return went above every known frame
  kCall,
  kTailCall,   // entered by a jump to a function's entry, replacing the frame that jumped
  kSyscall,    // syscall instruction -> kernel entry (named after the entry symbol)
  kInterrupt,  // interrupt or exception -> kernel entry
  kStandIn,    // in a part's builder: a stand-in whose kind no rule has read yet
};
const char* FrameKindName(FrameKind kind);

struct StackFrame {
  CallTreeNode* node = nullptr;  // this frame's node in its thread's tree
  FrameKind kind = FrameKind::kStart;
  // In a part's builder only: a stand-in for a frame the lane had when the part began, which the
  // part cannot know; its function and return address are guesses until the fold checks them.
  bool stand_in = false;
  uint64_t function = 0;     // the function's entry (symbol start, else the call target)
  uint64_t return_ip = 0;    // where execution resumes when the frame returns (0: unknown)
  uint64_t entry_insns = 0;  // the thread's instruction counter when the frame was entered
  uint64_t entry_ns = 0;     // the thread's time when the frame was entered
  bool entry_time_known = false;
};

// Whether the frame is a kernel entry: pushed by a syscall or an interrupt.
inline bool IsKernelEntry(const StackFrame& frame) {
  return frame.kind == FrameKind::kSyscall || frame.kind == FrameKind::kInterrupt;
}

// One thread's state as observers see it. `lane` is the tid, or -(cpu + 2) when events carry no
// tid (per-CPU streams), or -1 when they carry neither.
struct StackLane {
  int32_t lane = -1;
  int32_t pid = -1;
  int32_t tid = -1;
  int32_t cpu = -1;
  uint64_t insns = 0;  // instructions executed by this lane so far
  uint64_t ns = 0;     // the lane's latest known time
  bool time_known = false;
  // During OnPush/OnPop: the block whose last instruction (call, syscall, return, ...) caused it.
  uint64_t block_first_ip = 0;
  uint64_t block_last_ip = 0;
  std::vector<StackFrame> stack;  // outermost first
};

// What the fold of a builder's part tells its observers about one lane of the part.
struct PartLaneFold {
  // The real stack when the part's lane began (after its first block), outermost first, and the
  // number of stand-ins the part's stack began with for its top frames (0: the part's lane began
  // empty, or with nothing before it).
  std::vector<StackFrame> before;
  size_t stand_ins = 0;
  // Whether a gap emptied the part's stack (its stand-ins with it).
  bool reset = false;
  // The real lane's counters when the part's lane began: the part's counted from 0 and from no
  // known time.
  uint64_t insns = 0;
  uint64_t ns = 0;
  bool time_known = false;

  // The real stack index of the part's stack index `index` (a stand-in's, or of a frame the part
  // pushed and left on the stack).
  size_t RealIndex(size_t index) const {
    return reset ? index : index + before.size() - stand_ins;
  }
  // The real frame of the part's stand-in at stack index `index` (before a gap emptied the
  // part's stack, if one did), or null.
  const StackFrame* StandIn(size_t index) const {
    const size_t real = index + before.size() - stand_ins;
    if (index >= stand_ins || real >= before.size()) return nullptr;
    return &before[real];
  }
};
using PartFold = std::map<int32_t, PartLaneFold>;

class CallStackObserver {
 public:
  virtual ~CallStackObserver() = default;

  // For a builder taking its stream in parts: an observer of the same kind, empty, for a part's
  // builder; null when this observer cannot watch parts (the builder then takes one stream).
  virtual std::unique_ptr<CallStackObserver> NewPart() const { return nullptr; }
  // Why Fold cannot take `part` (made by NewPart) given how the part's lanes map to the real
  // ones; empty when it can.
  virtual std::string Refusal(const CallStackObserver& /*part*/, const PartFold& /*lanes*/) const {
    return {};
  }
  // Takes what `part` saw, which follows everything this observer saw so far.
  virtual void Fold(CallStackObserver& /*part*/, const PartFold& /*lanes*/) {}

  // `frame` was pushed; it is lane.stack.back().
  virtual void OnPush(const StackLane& /*lane*/, const StackFrame& /*frame*/) {}
  // `frame` is being popped; it is still lane.stack.back(). lane.insns/ns are the exit counters.
  virtual void OnPop(const StackLane& /*lane*/, const StackFrame& /*frame*/) {}
  // Instructions and time were attributed to lane.stack.back(): those of one block or of several
  // in a row (reported before the stack next changes, and at the end).
  virtual void OnCost(const StackLane& /*lane*/, uint64_t /*insns*/, uint64_t /*ns*/) {}
  // A gap: every frame of lane.stack is about to be dropped without a pop.
  virtual void OnReset(const StackLane& /*lane*/) {}
  // In a part's builder: the lane begins on stand-ins (what follows may belong to frames from
  // before the part). Every observer hears it, whatever it listens to.
  virtual void OnPartLaneBegin(const StackLane& /*lane*/) {}

  // Whether the observer needs to hear, for now, only of pushes of syscall and interrupt frames:
  // the builder then spares it every other call (most of a flow is user calls and returns).
  bool kernel_entries_only() const { return kernel_entries_only_; }

 protected:
  // Set by the observer itself whenever what it needs changes.
  void ListenToKernelEntriesOnly(bool only);

 private:
  friend class CallStackBuilder;
  bool kernel_entries_only_ = false;
  // The count of observers hearing everything of the builder this one was added to.
  int* hearing_all_ = nullptr;
};

struct CallStackOptions {
  const SymbolTable* symbols = nullptr;  // names frames; null: every frame is "0x<entry>"
  // An event's time in ns; default: header.time_ns when known. It must depend on the header's
  // time_ns and tsc only (blocks with the same ones are asked once).
  std::function<std::optional<uint64_t>(const EventHeader&)> time_of;
};

class CallStackBuilder : public PartedSink {
 public:
  explicit CallStackBuilder(CallStackOptions options);
  CallStackBuilder(const CallStackBuilder&) = delete;  // observers point at hearing_all_
  CallStackBuilder& operator=(const CallStackBuilder&) = delete;

  // Adds an observer (of this builder only) for the rest of the builder's life.
  void AddObserver(CallStackObserver* observer);

  void OnEvent(const TraceEvent& event) override;
  void OnBlocks(const BlockBatch& batch) override;
  void OnEnd() override;  // attributes the last blocks and finalises the trees

  // In parts (call_stack_parts.cc): a part is a builder of its own with a part of each observer.
  std::unique_ptr<EventSink> NewPart() const override;
  std::unique_ptr<EventSink> NewFirstPart() const override;
  std::string Refusal(const EventSink& part) const override;
  void Fold(std::unique_ptr<EventSink> part) override;
  bool TakesParts() const override;

  // The lanes seen, in increasing order.
  std::vector<int32_t> Lanes() const;
  // The tree of one lane (an empty tree for an unknown lane). Finalised after OnEnd.
  const CallTree& TreeOf(int32_t lane) const;
  // Every lane's tree merged into one, finalised.
  CallTree Merged() const;
  // Merged, for the last use of the trees: with one lane its tree is handed over whole instead
  // of copied node by node (the lane is left an empty tree).
  CallTree TakeMerged();
  const RepairCounts& repairs() const { return repairs_; }
  uint64_t blocks() const { return blocks_; }

  // The name and entry of the function covering `ip` (symbol), else "0x<ip>" at `ip`.
  std::pair<std::string, uint64_t> FunctionAt(uint64_t ip) const;

 private:
  // The lane's pending block: the last one taken, whose cost and move wait for the next one.
  // While OnBlocks holds it (call_stack_blocks.cc) only first_ip is current here, for a part's
  // guesses; OnBlocks writes the rest before anything else reads it.
  struct Pending {
    bool valid = false;
    uint64_t first_ip = 0, last_ip = 0, fall_through = 0;
    BlockEnd end = BlockEnd::kUnknown;
    uint32_t insns = 0;
    std::optional<uint64_t> start;  // when it began, when known
    bool cost_done = false;
    bool stopped = false;   // its cost ended at a known time (stop_ns): next block, gap, disable
    uint64_t stop_ns = 0;
    uint64_t end_time_ns = kUnknownTime;
    // `block`, begun at `now`, as the new pending block, its cost not attributed yet. Every field
    // is written once (not cleared first and written again).
    void Start(const ExecBlock& block, const std::optional<uint64_t>& now) {
      valid = true;
      first_ip = block.first_ip;
      last_ip = block.last_ip;
      fall_through = block.last_ip + block.last_insn_size;
      end = block.end;
      insns = block.insns;
      start = now;
      cost_done = false;
      stopped = false;
      stop_ns = 0;
      end_time_ns = block.end_time_ns;
    }
    // The time from `from` to `until`; 0 when either is unknown or `until` comes first.
    static uint64_t Elapsed(const std::optional<uint64_t>& from,
                            const std::optional<uint64_t>& until) {
      return until && from && *until >= *from ? *until - *from : 0;
    }
    // The time the block took when what follows it came at `until` (unknown: the block's own
    // end time, if it has one, which then goes into `until`); 0 when either end is unknown.
    uint64_t CostNs(std::optional<uint64_t>& until) const {
      if (!until && end_time_ns != kUnknownTime) until = end_time_ns;
      return Elapsed(start, until);
    }
  };
  // Stand-ins a part's lane begins with, and the marks of what is unknown about them: a return
  // address and a function no real one can equal (non-canonical addresses), with k.
  static constexpr size_t kStandIns = 48;
  static constexpr uint64_t kStandInReturn = 0xa5a5ull << 48;
  static constexpr uint64_t kStandInFunction = 0x5a5aull << 48;
  static bool IsStandInReturn(uint64_t ip) { return (ip >> 48) == 0xa5a5; }
  static bool IsStandInFunction(uint64_t f) { return (f >> 48) == 0x5a5a; }
  // What a part guessed of stand-in k (0: the top frame when the part began).
  struct StandInGuess {
    // kEntry: a syscall or an interrupt frame.
    enum class Kind : uint8_t { kUnread, kNotEntry, kEntry };
    // Whether it runs function F, for each F a rule compared it with (a symbol's entry): the
    // rules compare a frame's function with nothing else.
    std::vector<std::pair<uint64_t, bool>> runs;
    uint64_t return_ip = 0;
    bool return_guessed = false;
    Kind kind = Kind::kUnread;
  };
  // A part's lane: what it began with and what it guessed.
  struct PartLane {
    enum class Phase : uint8_t { kAwaitingFirst, kStandIns, kExact };
    Phase phase = Phase::kAwaitingFirst;
    // Events before the lane's first block (disables and gaps), which the fold passes on first.
    struct Lead {
      bool gap = false;
      std::optional<uint64_t> time;
    };
    std::vector<Lead> lead;
    bool began_empty = false;  // first part, or a gap before the first block: no stand-ins
    bool have_first = false;   // it began on stand-ins, after this first block the fold takes
    std::optional<uint64_t> first_now;
    ExecBlock first;
    std::deque<CallTreeNode> nodes;     // nodes[k]: stand-in k's node
    std::vector<StandInGuess> guesses;  // guesses[k]
    size_t consumed = 0;                // stand-ins popped
    uint64_t local_target = 0;          // the target of the lane's last local call
    bool reset = false;                 // a gap emptied the stack after the stand-ins
    // No real frame from stand-in `first` down runs `value` / expects a return to `value`.
    struct Absent {
      size_t first = 0;
      uint64_t value = 0;
    };
    std::vector<Absent> no_function, no_return;
  };
  struct Lane {
    StackLane view;
    CallTree tree;
    Pending pending;
    uint64_t local_calls = 0;  // local calls whose return has not come yet
    // Cost attributed to the top frame that observers have not heard of yet (ReportCost).
    uint64_t unreported_insns = 0, unreported_ns = 0;
    bool unreported = false;
    std::unique_ptr<PartLane> part;  // in a part's builder
  };
  enum class PartMode : uint8_t { kWhole, kPart, kFirstPart };
  // The kernel's entry code, [__entry_text_start, __entry_text_end) when the symbols have it:
  // a stand-in that runs there when a jump leaves it is guessed to be a syscall or interrupt
  // frame (the entry code jumps between its symbols, other functions jump to tail-call).
  struct EntryText {
    uint64_t begin = 0, end = 0;
  };
  EntryText FindEntryText() const;
  // The part (made by NewPart or NewFirstPart) with this builder's options and parts of its
  // observers.
  std::unique_ptr<CallStackBuilder> MakePart(PartMode mode) const;
  // In a part: the lane's first block; it begins on stand-ins (or empty).
  void BeginPartLane(Lane& lane, const std::optional<uint64_t>& now, const ExecBlock& block);
  // In a part, before the general rules: what a return, a kernel exit and a jump will read of
  // the stand-ins, guessed and kept; false: the outcome depends on what no guess covers.
  bool GuessForReturn(Lane& lane, uint64_t target);
  bool GuessForKernelExit(Lane& lane, uint64_t target, FrameKind kind);
  void GuessForJump(Lane& lane, uint64_t target);
  // Before a jump from a stand-in: whether it is guessed a kernel entry (it runs in the entry
  // text), where JumpTo leaves the stack as it is, whatever its function.
  bool GuessEntryStays(Lane& lane);
  // Whether the lane's top frame runs `function` (a symbol's entry, the one thing the rules
  // compare a frame's function with): for a stand-in whose function is not known yet, guessed
  // (it runs the function of the code it executes, the pending block's) and kept (GuessRuns).
  bool TopRuns(Lane& lane, uint64_t function) {
    const StackFrame& top = lane.view.stack.back();
    if (!top.stand_in || !IsStandInFunction(top.function)) return top.function == function;
    return GuessRuns(lane, function);
  }
  bool GuessRuns(Lane& lane, uint64_t function);
  void Fail(std::string why) {
    if (failed_.empty()) failed_ = std::move(why);
  }
  bool InStandIns(const Lane& lane) const {
    return lane.part && lane.part->phase == PartLane::Phase::kStandIns;
  }
  // The fold of one of a part's lanes: the real lane's stack after the part's lead events and
  // first block (taken through `lane`), and the check of the part's guesses against it.
  void TakeLead(Lane& lane, const PartLane& part);
  // What a guess of `part` got wrong against `stack`; empty when none.
  std::string Mismatch(const PartLane& part, const std::vector<StackFrame>& stack) const;
  // What observers need of a part's lane, the real one being `real` after TakeLead.
  static PartLaneFold FoldOf(const Lane& real, const PartLane& part);
  // Puts the part's lane on the real one (after TakeLead), returns what observers need.
  PartLaneFold Graft(Lane& real, Lane& part_lane);


  int32_t LaneKey(const EventHeader& header) const;
  Lane& LaneFor(const EventHeader& header);
  void OnBlock(const EventHeader& header, const ExecBlock& block);
  // OnBlock with its lane and time found already (out of line: OnBlocks, which is flattened,
  // calls it for the blocks it leaves to the general rules).
  [[gnu::noinline]] void TakeBlock(Lane& lane, const std::optional<uint64_t>& now,
                                   const ExecBlock& block);
  void AttributePending(Lane& lane, std::optional<uint64_t> until_ns);
  // `insns` and `ns` of the top frame's, on its node and the lane's counters.
  void AddCost(Lane& lane, CallTreeNode& node, uint64_t insns, uint64_t ns) {
    node.self_insns += insns;
    node.self_ns += ns;
    lane.view.insns += insns;
    // Observers hear of the cost once the frame changes (ReportCost): one call for a run of
    // blocks. Cost taken while none hears everything is not kept for later: observers change
    // what they hear only when they are told something, which is always after ReportCost.
    if (hearing_all_ == 0) return;
    lane.unreported_insns += insns;
    lane.unreported_ns += ns;
    lane.unreported = true;
  }
  // Tells the observers hearing everything of the cost the lane's top frame took since they last
  // heard of it (AddCost), before the stack changes.
  void ReportCost(Lane& lane) {
    if (!lane.unreported) return;
    TellHearingAll([&lane](CallStackObserver& observer) {
      observer.OnCost(lane.view, lane.unreported_insns, lane.unreported_ns);
    });
    lane.unreported_insns = lane.unreported_ns = 0;
    lane.unreported = false;
  }
  // Calls `tell` with each observer that hears everything (not only kernel entries).
  template <typename Tell>
  void TellHearingAll(Tell&& tell) {
    if (hearing_all_ == 0) return;
    for (CallStackObserver* observer : observers_)
      if (!observer->kernel_entries_only()) tell(*observer);
  }
  static bool Transitions(BlockEnd end) {
    switch (end) {
      case BlockEnd::kCall:
      case BlockEnd::kReturn:
      case BlockEnd::kSyscall:
      case BlockEnd::kInterrupt:
      case BlockEnd::kSysret:
      case BlockEnd::kIret:
      case BlockEnd::kJump:
      case BlockEnd::kFarBranch: return true;
      default: return false;
    }
  }
  // FunctionAt, kept per address: the frame name, the function's entry, whether a symbol names it.
  struct Named {
    std::string name;
    uint64_t function = 0;
    bool symbol = false;
    // The node this name was last pushed as, and under which parent (tree nodes stay put and
    // live as long as the builder): a function called again from the same place finds its node
    // without comparing names.
    mutable const CallTreeNode* pushed_under = nullptr;
    mutable CallTreeNode* pushed_as = nullptr;
  };
  // A direct-mapped slot of NameAt, with the named function's entry beside the key (a jump's
  // target is checked against the current frame without touching the name).
  struct NameSlot {
    uint64_t ip = 0;
    uint64_t function = 0;
    bool symbol = false;
    const Named* named = nullptr;  // names_ is node-based: it stays put
  };
  const Named& NameAt(uint64_t ip) const { return *SlotAt(ip).named; }
  // Calls and jumps go to the same few addresses over and over: a direct-mapped slot first.
  const NameSlot& SlotAt(uint64_t ip) const {
    NameSlot& slot = name_front_[(ip * 0x9e3779b97f4a7c15ull) >> (64 - kNameFrontBits)];
    if (slot.named && slot.ip == ip) return slot;
    return FillNameSlot(slot, ip);
  }
  [[gnu::noinline]] const NameSlot& FillNameSlot(NameSlot& slot, uint64_t ip) const;
  const Named& LookUpName(uint64_t ip) const;
  static constexpr unsigned kNameFrontBits = 12;
  // What the block ending a pending block (call, return, jump) does to the stack when the next
  // block starts at `target`, for the moves OnBlocks makes itself; kOther: TakeBlock's way.
  enum class Move : uint8_t { kNone, kPop, kPush, kLocalCall, kTailCall, kOther };
  // A call's or a jump's move from a top frame to a target, found once (FillEdge) and kept in
  // a direct-mapped table: for a push or tail call, the node the new frame is and its function;
  // kNone for a jump that stays in the frame (not kept for a stand-in's jumps, which guess).
  struct EdgeSlot {
    const CallTreeNode* from = nullptr;  // the top frame's node; null: an empty slot
    uint64_t from_function = 0;          // the top frame's function
    uint64_t target = 0;
    CallTreeNode* to = nullptr;
    uint64_t function = 0;
    BlockEnd end = BlockEnd::kUnknown;   // kCall or kJump
    bool from_entry = false;             // the top frame is a kernel entry (JumpStays reads it)
    Move move = Move::kOther;
  };
  static constexpr unsigned kEdgeBits = 11;
  // The move of a pending block ending in `end` when the next block starts at `target`; `edge`
  // is set for kPush and kTailCall. The lane's stack is not empty.
  [[gnu::always_inline]] Move MoveOf(Lane& lane, BlockEnd end, uint64_t target,
                                     const EdgeSlot*& edge);
  // The lane's top frame's move.
  [[gnu::always_inline]] const EdgeSlot& EdgeFor(Lane& lane, BlockEnd end, uint64_t target);
  // Finds what EdgeFor keeps in `slot`.
  [[gnu::noinline]] void FillEdge(EdgeSlot& slot, Lane& lane, BlockEnd end, uint64_t target);
  // Whether the lane's stack stays as it is from `block` to the block at `next` (the move
  // MoveOf would find kNone, once `block` is pending), while no time passes; false when that
  // needs `block` pending. The lane's stack is not empty.
  [[gnu::always_inline]] bool StaysAfter(Lane& lane, const PackedEvent& block, uint64_t next);
  // Applies a move other than kNone and kOther of the lane's pending block, which falls through
  // to `fall_through` (a call's return address).
  [[gnu::always_inline]] void Apply(Lane& lane, Move move, const EdgeSlot* edge,
                                    uint64_t fall_through);
  void Transition(Lane& lane, uint64_t target);
  void Push(Lane& lane, FrameKind kind, uint64_t target, uint64_t return_ip);
  void PushNamed(Lane& lane, FrameKind kind, const std::string& name, uint64_t function,
                 uint64_t return_ip);
  // PushNamed for a name NameAt gave.
  void PushNamed(Lane& lane, FrameKind kind, const Named& named, uint64_t return_ip);
  // Pushes a frame on `node`. Most pushes need no one told (Quiet, and not a kernel entry, which
  // observers of kernel entries hear): those are made here, in place; the others by
  // PushNodeTelling.
  [[gnu::always_inline]] void PushNode(Lane& lane, FrameKind kind, CallTreeNode& node,
                                       uint64_t function, uint64_t return_ip) {
    if (Quiet(lane) && kind != FrameKind::kSyscall && kind != FrameKind::kInterrupt)
      PlaceFrame(lane, kind, node, function, return_ip);
    else
      PushNodeTelling(lane, kind, node, function, return_ip);
  }
  [[gnu::noinline]] void PushNodeTelling(Lane& lane, FrameKind kind, CallTreeNode& node,
                                         uint64_t function, uint64_t return_ip);
  // The frame PushNode pushes, pushed (the node's entries counted) with no one told.
  [[gnu::always_inline]] static StackFrame& PlaceFrame(Lane& lane, FrameKind kind,
                                                       CallTreeNode& node, uint64_t function,
                                                       uint64_t return_ip) {
    ++node.entries;
    // Written in place: a frame built aside and copied in is read back wider than it was
    // written (a store-forwarding stall on every call).
    StackFrame& frame = lane.view.stack.emplace_back();
    frame.node = &node;
    frame.kind = kind;
    frame.function = function;
    frame.return_ip = return_ip;
    frame.entry_insns = lane.view.insns;
    frame.entry_ns = lane.view.ns;
    frame.entry_time_known = lane.view.time_known;
    return frame;
  }
  // Whether a push or a pop of a frame other than a stand-in or a kernel entry needs no one told:
  // none hears everything, and no cost waits to be heard.
  bool Quiet(const Lane& lane) const { return hearing_all_ == 0 && !lane.unreported; }
  CallTreeNode& TopNode(Lane& lane) {
    return lane.view.stack.empty() ? lane.tree.root() : *lane.view.stack.back().node;
  }
  // Pops the top frame: in place when no one needs telling (Quiet, not a stand-in, which a part
  // counts), else by PopTelling.
  [[gnu::always_inline]] void Pop(Lane& lane) {
    if (Quiet(lane) && !lane.view.stack.back().stand_in)
      lane.view.stack.pop_back();
    else
      PopTelling(lane);
  }
  [[gnu::noinline]] void PopTelling(Lane& lane);
  void PopTo(Lane& lane, size_t index);  // pops frames index..top
  void StartStack(Lane& lane, uint64_t ip, FrameKind kind);
  void Reset(Lane& lane);
  void ReturnTo(Lane& lane, uint64_t target);
  void KernelExitTo(Lane& lane, uint64_t target, FrameKind kind);
  // A context switch on `cpu` at `time`: the block of the thread running there has ended.
  void EndBlockOnCpu(int32_t cpu, const std::optional<uint64_t>& time);
  void JumpTo(Lane& lane, uint64_t target);
  // Whether a jump to `target` leaves the stack as it is (JumpTo does nothing): no symbols, no
  // symbol there, the top frame's function, or a kernel entry on top (the entry code jumps
  // between its assembly symbols).
  bool JumpStays(Lane& lane, uint64_t target) {
    if (!options_.symbols) return true;
    const NameSlot& slot = SlotAt(target);
    if (!slot.symbol) return true;
    const StackFrame& top = lane.view.stack.back();
    // A stand-in's kind first: a kernel entry stays whatever its function.
    if (top.stand_in && GuessEntryStays(lane)) return true;
    return TopRuns(lane, slot.function) || IsKernelEntry(top);
  }
  // Whether a call from the lane's top frame to `target` (named `named`) is to a label of the
  // same function (a retpoline's `call 1f`, a get-pc thunk): no new frame.
  bool IsLocalCall(Lane& lane, const Named& named, uint64_t target) {
    return options_.symbols && named.symbol && named.function != target &&
           TopRuns(lane, named.function);
  }
  // A local call to `target`: counted, and remembered by a part (GuessForReturn).
  void CountLocalCall(Lane& lane, uint64_t target) {
    ++lane.local_calls;
    ++repairs_.local_calls;
    if (lane.part) lane.part->local_target = target;
  }
  // The node under `parent` and the function of the frame a call to `target` (named `named`)
  // pushes: the named function's, or, for a call into the middle of a symbol (a local label),
  // that address.
  std::pair<CallTreeNode*, uint64_t> CalleeOf(CallTreeNode& parent, const Named& named,
                                              uint64_t target);
  // `named`'s node under `parent`, remembered on the name for the next push from there.
  CallTreeNode& NodeOf(CallTreeNode& parent, const Named& named);

  CallStackOptions options_;
  std::vector<CallStackObserver*> observers_;
  int hearing_all_ = 0;  // observers_ not listening to kernel entries only
  std::map<int32_t, Lane> lanes_;
  std::unordered_map<int32_t, int32_t> cpu_tid_;  // from sideband context switches
  RepairCounts repairs_;
  uint64_t blocks_ = 0;
  std::optional<uint64_t> pending_stop_;  // during Transition: when the previous block's cost ended
  CallTree empty_;
  PartMode part_mode_ = PartMode::kWhole;
  EntryText entry_text_;            // a part's, from the builder that made it
  mutable std::once_flag entry_text_once_;
  mutable EntryText found_entry_text_;
  std::string failed_;             // a part's: why it cannot be folded
  std::vector<int32_t> unmapped_cpus_;  // a part's: CPUs whose thread it did not know
  // A part's: its first switch on a CPU, from a thread only the real builder knows, and when.
  struct LeadSwitch {
    int32_t cpu = 0;
    std::optional<uint64_t> time;
  };
  std::vector<LeadSwitch> lead_switches_;
  std::vector<std::unique_ptr<CallStackObserver>> owned_observers_;  // a part's
  mutable std::unordered_map<uint64_t, Named> names_;
  mutable std::vector<NameSlot> name_front_ = std::vector<NameSlot>(size_t{1} << kNameFrontBits);
  std::vector<EdgeSlot> edges_ = std::vector<EdgeSlot>(size_t{1} << kEdgeBits);
};

}  // namespace ptprof
