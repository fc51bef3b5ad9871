#pragma once
// LaneHearing answers, for an observer of a part's call-stack builder (call_stack_parts.cc), "what
// happened on each lane while something the real observer has open from before the part may still
// be open there?". A part's lane begins on stand-ins, so it may begin inside a syscall without
// knowing it. From the lane's beginning (OnPartLaneBegin) it records the lane's pushes, pops, costs
// and gaps, with their stack index, until a stand-in that is a syscall frame returns (the end of a
// syscall begun before), a gap, or user code moves the stack (a call, a return, a syscall of the
// part's own: then no syscall from before should be open, and one that is was not heard:
// `complete` false), or until 65536 events. The fold replays what it heard into what the real
// observer has open on that lane.
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "src/analyses/support/call_stack.h"

namespace ptprof {

class LaneHearing {
 public:
  struct Event {
    enum class Kind : uint8_t { kPush, kPop, kCost, kReset };
    Kind kind = Kind::kPush;
    size_t index = 0;                    // push, pop: the frame's stack index; cost: the top's
    const CallTreeNode* node = nullptr;  // push: the frame's node
    uint64_t insns = 0, ns = 0;          // cost: its amounts; pop: the lane's counters
    bool time_known = false;             // pop
    uint64_t order = 0;                  // events heard on any lane up to this one
  };
  struct Lane {
    std::vector<Event> heard;
    bool listening = true;
    bool complete = true;
  };

  // The part's lane begins on stand-ins: hear it.
  void Begin(const StackLane& lane);
  // What the lane did; true when it made the lane stop being heard.
  bool Hear(const StackLane& lane, Event::Kind kind, const StackFrame* frame, uint64_t insns,
            uint64_t ns);

  // Whether some lane is still being heard.
  bool listening() const { return listening_; }
  // Events heard so far, on every lane (what the part had heard when something happened orders
  // it among the replayed events at the fold).
  uint64_t heard() const { return heard_; }
  const std::map<int32_t, Lane>& lanes() const { return lanes_; }

  // Why the fold cannot go on, from what was heard, with a syscall the real lanes had open when
  // the part's lanes began (their lowest syscall frames); empty when it can.
  std::string UnheardSyscall(const PartFold& lanes) const;
  // Whether what was heard of a lane lets the fold go on with the frame at real stack index
  // `open_index` that was open when the part began: heard until it returned, until a gap, or to
  // the part's end.
  static bool HeardThrough(const Lane& heard, const PartLaneFold& fold, size_t open_index);
  // The real stack index of a heard event's `index`.
  static size_t RealIndex(const Event& event, const PartLaneFold& fold) {
    return event.index + fold.before.size() - fold.stand_ins;
  }

 private:
  std::map<int32_t, Lane> lanes_;
  uint64_t heard_ = 0;
  bool listening_ = false;
};

// A call-stack observer that, in a part's builder, hears its lanes (the syscall observers: they go
// on at the fold with a syscall open before the part).
class HearingObserver : public CallStackObserver {
 public:
  void OnPartLaneBegin(const StackLane& lane) override {
    hearing_.Begin(lane);
    ListenToKernelEntriesOnly(false);
  }

 protected:
  // In a part's observer: what the lane did, heard. Once no lane is heard any more, the observer
  // hears only of kernel entries if `nothing_open` (it has nothing open on any lane).
  void Hear(const StackLane& lane, LaneHearing::Event::Kind kind, const StackFrame* frame,
            uint64_t insns, uint64_t ns, bool nothing_open) {
    if (in_part_ && hearing_.Hear(lane, kind, frame, insns, ns) && !hearing_.listening())
      ListenToKernelEntriesOnly(nothing_open);
  }

  bool in_part_ = false;  // made by NewPart
  LaneHearing hearing_;   // a part's
};

}  // namespace ptprof
