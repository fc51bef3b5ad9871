// CallStackBuilder::OnBlocks: blocks in bulk, and the moves most of them make on the stack (none,
// a call, a return to the frame that expects it, a tail call) made here rather than by
// TakeBlock's general rules, which it leaves the rest to. A call's or a tail call's move is worked
// out once per top frame and target by those rules (FillEdge) and kept in a direct-mapped table.
#include "src/analyses/support/call_stack.h"

#include <tuple>

namespace ptprof {

inline const CallStackBuilder::EdgeSlot& CallStackBuilder::EdgeFor(Lane& lane, BlockEnd end,
                                                                   uint64_t target) {
  const StackFrame& top = lane.view.stack.back();
  const uint64_t key = reinterpret_cast<uintptr_t>(top.node) ^ (target * 0x9e3779b97f4a7c15ull);
  EdgeSlot& slot = edges_[(key * 0xff51afd7ed558ccdull) >> (64 - kEdgeBits)];
  if (slot.from == top.node && slot.target == target && slot.from_function == top.function &&
      slot.end == end && slot.from_entry == IsKernelEntry(top))
    return slot;
  FillEdge(slot, lane, end, target);
  return slot;
}

inline CallStackBuilder::Move CallStackBuilder::MoveOf(Lane& lane, BlockEnd end,
                                                       uint64_t target, const EdgeSlot*& edge) {
  const std::vector<StackFrame>& stack = lane.view.stack;
  switch (end) {
    case BlockEnd::kReturn:
      // To the frame below the top, as the top frame expects, whether or not a local call is
      // open: ReturnTo takes a return as a local call's only when no frame expects it. (An
      // unwind, a retpoline's return, a return from the outermost frame: ReturnTo.)
      return stack.size() > 1 && target != 0 && stack.back().return_ip == target ? Move::kPop
                                                                                  : Move::kOther;
    case BlockEnd::kCall:
      edge = &EdgeFor(lane, end, target);
      return edge->move;
    case BlockEnd::kJump:
      // Under a stand-in, JumpStays guesses (and keeps what it guessed); on any other frame its
      // answer is the edge's, kept with the rest (FillEdge).
      if (stack.back().stand_in && JumpStays(lane, target)) return Move::kNone;
      edge = &EdgeFor(lane, end, target);
      return edge->move;
    default:
      return Transitions(end) ? Move::kOther : Move::kNone;
  }
}

inline bool CallStackBuilder::StaysAfter(Lane& lane, const PackedEvent& block, uint64_t next) {
  const auto end = static_cast<BlockEnd>(block.end);
  if (end != BlockEnd::kJump) return !Transitions(end);
  // Not under a part's stand-in: JumpStays would guess its function from the pending block,
  // which is not `block` yet.
  return !lane.view.stack.back().stand_in && JumpStays(lane, next);
}

inline void CallStackBuilder::Apply(Lane& lane, Move move, const EdgeSlot* edge,
                                    uint64_t fall_through) {
  switch (move) {
    case Move::kPop:
      Pop(lane);
      break;
    case Move::kPush:
      PushNode(lane, FrameKind::kCall, *edge->to, edge->function, fall_through);
      break;
    case Move::kLocalCall:
      CountLocalCall(lane, edge->target);
      break;
    case Move::kTailCall: {
      ++repairs_.tail_calls;
      const uint64_t return_ip = lane.view.stack.back().return_ip;
      Pop(lane);
      if (edge->to->parent == &TopNode(lane))
        PushNode(lane, FrameKind::kTailCall, *edge->to, edge->function, return_ip);
      else  // a frame whose node is not its caller's child (none is made so): as JumpTo
        PushNamed(lane, FrameKind::kTailCall, NameAt(edge->target), return_ip);
      break;
    }
    default:
      break;
  }
}

// Flattened: past its size GCC stopped inlining into it, and the frame pushed on every call went
// through an out-of-line vector::emplace_back (sort's call stacks: 159 M instructions fewer in
// callgrind, 0.42-0.47 -> 0.50-0.51 of the decode). TakeBlock, the general rules, stays a call.
[[gnu::flatten]] void CallStackBuilder::OnBlocks(const BlockBatch& batch) {
  if (batch.blocks.empty() || !failed_.empty()) return;
  EventHeader header = batch.Header();
  Lane& lane = LaneFor(header);
  std::optional<uint64_t> now;
  bool timed = false;  // `now` is the time of header.tsc
  ExecBlock block;
  // The cost of the blocks attributed to the top frame in a row, added to its node (and to the
  // lane's counters) once the frame changes or the batch ends: not block by block through memory.
  CallTreeNode* cost_node = nullptr;
  uint64_t cost_insns = 0, cost_ns = 0;
  auto add_cost = [&] {
    if (!cost_node) return;
    AddCost(lane, *cost_node, cost_insns, cost_ns);
    cost_node = nullptr;
    cost_insns = cost_ns = 0;
  };
  // The lane's pending block as this loop keeps it: `held`, one of the batch's blocks, begun at
  // `held_now`, its cost not attributed, with no end time of its own; lane.pending has its
  // first_ip (what a part's guesses read), and the rest of it is written (settle) only before
  // the general rules and at the batch's end. Most blocks are pending for one step, and writing
  // each one's fields took a sixth of this loop. The batch's first block, with no block held,
  // goes to the general rules, which leave it pending as it would be held.
  const PackedEvent* held = nullptr;
  std::optional<uint64_t> held_now;
  auto settle = [&] {
    if (!held) return;
    UnpackExecBlock(*held, block);
    lane.pending.Start(block, held_now);
    held = nullptr;
  };
  uint64_t taken = 0;  // blocks taken here, added to blocks_ at the end (not one by one)
  const PackedEvent* const begin = batch.blocks.data();
  const PackedEvent* const end = begin + batch.blocks.size();
  for (const PackedEvent* at = begin; at != end; ++at) {
    const PackedEvent& p = *at;
    if (!timed || p.tsc != header.tsc) {
      header.tsc = p.tsc;
      header.time_ns = batch.TimeNs(static_cast<size_t>(at - begin));
      now = options_.time_of(header);
      timed = true;
    }
    const EdgeSlot* edge = nullptr;
    const Move move = held && !lane.view.stack.empty()
                          ? MoveOf(lane, static_cast<BlockEnd>(held->end), p.first_ip_or_index,
                                   edge)
                          : Move::kOther;
    if (move != Move::kOther) {
      // TakeBlock for the moves most blocks make (none, a call, a return, a tail call): the
      // pending block's cost goes to the top frame, the stack moves, this block is the pending
      // one.
      CallTreeNode* node = lane.view.stack.back().node;
      if (node != cost_node) {
        add_cost();
        cost_node = node;
      }
      cost_insns += held->insns;
      cost_ns += Pending::Elapsed(held_now, now);  // Pending::CostNs, with no end time
      if (now) {
        lane.view.ns = *now;
        lane.view.time_known = true;
      }
      if (move != Move::kNone) {
        add_cost();  // the frame's counters as they are when it moves
        lane.view.block_first_ip = held->first_ip_or_index;
        lane.view.block_last_ip = held->first_ip_or_index + held->span;
        Apply(lane, move, edge, lane.view.block_last_ip + held->last_insn_size);
        cost_node = lane.view.stack.back().node;
      }
      // The blocks after this one at the same time that move nothing (after a conditional
      // branch, or a jump within the function): each one's cost is its predecessor's
      // instructions (no time passes between them), and only the last one of them is left
      // pending, not each in turn.
      const PackedEvent* last = &p;
      for (const PackedEvent* next = last + 1; next != end && next->tsc == header.tsc &&
                                               StaysAfter(lane, *last, next->first_ip_or_index);
           last = next++) {
        cost_insns += last->insns;
        ++taken;
      }
      ++taken;
      at = last;
      held = last;
      held_now = now;
      lane.pending.first_ip = last->first_ip_or_index;
      continue;
    }
    add_cost();
    settle();
    UnpackExecBlock(p, block);
    TakeBlock(lane, now, block);
    if (!failed_.empty()) {  // a part that cannot be folded
      blocks_ += taken;
      return;
    }
    // TakeBlock leaves the block pending (Pending::Start) as it is held.
    held = &p;
    held_now = now;
  }
  add_cost();
  settle();
  blocks_ += taken;
}

void CallStackBuilder::FillEdge(EdgeSlot& slot, Lane& lane, BlockEnd end, uint64_t target) {
  const StackFrame& top = lane.view.stack.back();
  slot = EdgeSlot{top.node, top.function, target, nullptr, 0, end, IsKernelEntry(top),
                  Move::kOther};
  if (end == BlockEnd::kJump && !top.stand_in && JumpStays(lane, target)) {
    slot.move = Move::kNone;  // what JumpStays answers depends on nothing the slot's key leaves out
    return;
  }
  const Named& named = NameAt(target);
  if (end == BlockEnd::kCall) {  // as Transition
    if (IsLocalCall(lane, named, target)) {
      slot.move = Move::kLocalCall;
    } else {
      std::tie(slot.to, slot.function) = CalleeOf(*top.node, named, target);
      slot.move = Move::kPush;
    }
  } else if (named.function == target && top.node->parent) {
    // A jump to another function's entry (JumpTo): the new frame is a sibling of the top one.
    slot.to = &NodeOf(*top.node->parent, named);
    slot.function = named.function;
    slot.move = Move::kTailCall;
  }
}

}  // namespace ptprof
