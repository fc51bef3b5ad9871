#include "src/analyses/support/lane_hearing.h"

#include <catch2/catch.hpp>

using namespace ptprof;

namespace {

constexpr uint64_t kKernelIp = 0xffffffff81000000ull;
constexpr uint64_t kUserIp = 0x401000;

using Kind = LaneHearing::Event::Kind;

// A part's lane 5 on `stand_ins` stand-ins, the lowest of them a syscall frame, a kernel frame
// above them.
struct Part {
  CallTreeNode node;
  StackLane lane;
  LaneHearing hearing;
  explicit Part(size_t stand_ins) {
    node.name = "kernel_function";
    lane.lane = 5;
    lane.block_last_ip = kKernelIp;
    for (size_t i = 0; i < stand_ins; ++i) {
      StackFrame& frame = lane.stack.emplace_back();
      frame.node = &node;
      frame.stand_in = true;
      frame.kind = i == 0 ? FrameKind::kSyscall : FrameKind::kCall;
    }
    hearing.Begin(lane);
  }
  bool Push() {
    StackFrame& frame = lane.stack.emplace_back();
    frame.node = &node;
    return hearing.Hear(lane, Kind::kPush, &frame, 0, 0);
  }
  bool Pop() {  // hears the top frame popped, then pops it
    const bool stopped = hearing.Hear(lane, Kind::kPop, &lane.stack.back(), 0, 0);
    lane.stack.pop_back();
    return stopped;
  }
};

// The real lane had `below` frames under the part's stand-ins; its syscall frame is the lowest
// stand-in.
PartLaneFold FoldOf(size_t below, size_t stand_ins) {
  PartLaneFold fold;
  fold.before.resize(below + stand_ins);
  fold.stand_ins = stand_ins;
  return fold;
}

}  // namespace

TEST_CASE("a lane is heard until the syscall open before the part returns, and through it") {
  Part part(2);
  CHECK_FALSE(part.Push());
  CHECK_FALSE(part.hearing.Hear(part.lane, Kind::kCost, nullptr, 10, 0));
  CHECK_FALSE(part.Pop());
  CHECK_FALSE(part.Pop());  // the stand-in call frame
  CHECK(part.Pop());        // the stand-in syscall frame: heard through
  CHECK_FALSE(part.hearing.listening());
  const LaneHearing::Lane& heard = part.hearing.lanes().at(5);
  REQUIRE(heard.heard.size() == 5);
  CHECK(heard.complete);
  const PartLaneFold fold = FoldOf(3, 2);  // the syscall frame at real index 3
  CHECK(LaneHearing::RealIndex(heard.heard.back(), fold) == 3);
  CHECK(LaneHearing::HeardThrough(heard, fold, 3));
  // Nothing more is heard of the lane.
  CHECK_FALSE(part.Push());
  CHECK(part.hearing.lanes().at(5).heard.size() == 5);
}

TEST_CASE("a lane heard to the part's end, or to a gap, is heard through") {
  Part open(1);
  open.Push();
  CHECK(open.hearing.listening());
  CHECK(LaneHearing::HeardThrough(open.hearing.lanes().at(5), FoldOf(0, 1), 0));
  Part gap(1);
  CHECK(gap.hearing.Hear(gap.lane, Kind::kReset, nullptr, 0, 0));
  CHECK(LaneHearing::HeardThrough(gap.hearing.lanes().at(5), FoldOf(0, 1), 0));
}

TEST_CASE("user code moving the stack, or the return of another syscall, is not heard through") {
  Part user(1);
  user.lane.block_last_ip = kUserIp;
  CHECK(user.Push());  // user code inside a syscall from before: stop, incomplete
  CHECK_FALSE(user.hearing.lanes().at(5).complete);
  CHECK_FALSE(LaneHearing::HeardThrough(user.hearing.lanes().at(5), FoldOf(0, 1), 0));
  // A syscall frame below the part's stand-ins was open: the lowest stand-in's return ends the
  // hearing, but not the syscall open below it.
  Part nested(1);
  CHECK(nested.Pop());
  CHECK(nested.hearing.lanes().at(5).complete);
  CHECK_FALSE(LaneHearing::HeardThrough(nested.hearing.lanes().at(5), FoldOf(2, 1), 0));
  CHECK(LaneHearing::HeardThrough(nested.hearing.lanes().at(5), FoldOf(2, 1), 2));
}

TEST_CASE("a part whose lane began inside a syscall it did not hear through is refused") {
  Part user(2);
  user.lane.block_last_ip = kUserIp;
  user.Push();  // stops the hearing, incomplete
  PartFold lanes;
  lanes[5] = FoldOf(1, 2);
  lanes[5].before[1].kind = FrameKind::kSyscall;  // the real syscall frame, a stand-in's
  CHECK(user.hearing.UnheardSyscall(lanes) == "it began inside a syscall whose end it did not hear");
  lanes[5].before[1].kind = FrameKind::kCall;  // no syscall open there
  CHECK(user.hearing.UnheardSyscall(lanes).empty());
  Part through(2);
  through.Pop();
  through.Pop();  // the stand-in syscall frame returned
  lanes[5].before[1].kind = FrameKind::kSyscall;
  CHECK(through.hearing.UnheardSyscall(lanes).empty());
  PartFold other;
  other[6] = lanes[5];  // a lane the part began empty
  CHECK(user.hearing.UnheardSyscall(other).empty());
}
