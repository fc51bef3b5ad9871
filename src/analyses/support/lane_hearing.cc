#include "src/analyses/support/lane_hearing.h"

namespace ptprof {

namespace {

// The events heard of one lane at most (a lane that never leaves a syscall begun before the part:
// its fold is refused past this).
constexpr size_t kHeardMax = size_t{1} << 16;

}  // namespace

void LaneHearing::Begin(const StackLane& lane) {
  lanes_[lane.lane] = Lane{};
  listening_ = true;
}

bool LaneHearing::Hear(const StackLane& lane, Event::Kind kind, const StackFrame* frame,
                       uint64_t insns, uint64_t ns) {
  ++heard_;
  auto it = lanes_.find(lane.lane);
  if (it == lanes_.end() || !it->second.listening) return false;  // (a lane begun empty)
  Lane& heard = it->second;
  Event& event = heard.heard.emplace_back();
  event.kind = kind;
  event.order = heard_;
  event.index = lane.stack.empty() ? 0 : lane.stack.size() - 1;
  if (kind == Event::Kind::kPush) event.node = frame->node;
  if (kind == Event::Kind::kCost) {
    event.insns = insns;
    event.ns = ns;
  }
  if (kind == Event::Kind::kPop) {
    event.insns = lane.insns;
    event.ns = lane.ns;
    event.time_known = lane.time_known;
  }
  bool stop = kind == Event::Kind::kReset ||
              (kind == Event::Kind::kPop && frame->stand_in && frame->kind == FrameKind::kSyscall);
  // User code moving the stack is not inside a syscall; nor is a lane heard too long: a syscall
  // open before the part would not be heard to its end.
  const bool user = (kind == Event::Kind::kPush || kind == Event::Kind::kPop) &&
                    (lane.block_last_ip >> 63) == 0;
  if (!stop && (user || heard.heard.size() >= kHeardMax)) {
    stop = true;
    heard.complete = false;
  }
  if (!stop) return false;
  heard.listening = false;
  listening_ = false;
  for (const auto& [key, other] : lanes_) listening_ |= other.listening;
  return true;
}

std::string LaneHearing::UnheardSyscall(const PartFold& lanes) const {
  for (const auto& [lane, fold] : lanes) {
    size_t open = 0;
    while (open < fold.before.size() && fold.before[open].kind != FrameKind::kSyscall) ++open;
    if (open == fold.before.size()) continue;  // no syscall open there
    auto heard = lanes_.find(lane);
    if (heard == lanes_.end()) continue;  // it began empty: nothing open before it
    if (!HeardThrough(heard->second, fold, open))
      return "it began inside a syscall whose end it did not hear";
  }
  return {};
}

bool LaneHearing::HeardThrough(const Lane& heard, const PartLaneFold& fold, size_t open_index) {
  if (!heard.complete) return false;
  for (const Event& event : heard.heard) {
    if (event.kind == Event::Kind::kReset) return true;
    if (event.kind == Event::Kind::kPop && RealIndex(event, fold) == open_index) return true;
  }
  // Heard to the part's end (the frame is still open), or it stopped at the return of a syscall
  // nested in the open one: not all of the open one was heard.
  return heard.listening;
}

}  // namespace ptprof
