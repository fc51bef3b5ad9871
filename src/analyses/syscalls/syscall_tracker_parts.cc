// SyscallTracker watching a CallStackBuilder that takes its stream in parts: a part's tracker
// records the syscalls of its part as the tracker of one stream would, keeps what only the fold
// can complete, and hears each lane from its beginning until nothing from before the part can be
// open there (until the lane runs user code), so that the fold can go on with a syscall the real
// tracker has open.
#include <algorithm>

#include "src/analyses/syscalls/syscall_tracker.h"

namespace ptprof::syscalls {

std::unique_ptr<CallStackObserver> SyscallTracker::NewPart() const {
  auto part = std::make_unique<SyscallTracker>(arch_, user_number_);
  part->in_part_ = true;
  return part;
}

std::string SyscallTracker::Refusal(const CallStackObserver& part,
                                    const PartFold& lanes) const {
  return static_cast<const SyscallTracker&>(part).hearing_.UnheardSyscall(lanes);
}

void SyscallTracker::GoOn(int32_t lane, const LaneHearing::Lane& heard, const PartLaneFold& fold,
                          std::vector<std::pair<uint64_t, SyscallInstance>>& closed) {
  auto it = open_.find(lane);
  if (it == open_.end()) return;
  Open& open = it->second;
  ++gone_on_;
  const StackFrame& syscall = fold.before[open.depth];
  for (const LaneHearing::Event& event : heard.heard) {
    const size_t index = LaneHearing::RealIndex(event, fold);
    switch (event.kind) {
      case LaneHearing::Event::Kind::kPush:
        Enter(open, index, event.node->name);
        break;
      case LaneHearing::Event::Kind::kCost:
        AddCost(open, index, event.insns, event.ns);
        break;
      case LaneHearing::Event::Kind::kPop: {
        // The lane's counters then: the part's from the real ones when it began, its time if it
        // had one yet.
        const bool known = event.time_known || fold.time_known;
        const uint64_t now = event.time_known ? event.ns : fold.ns;
        if (!Leave(open, index, event.insns + fold.insns, now, known, syscall)) break;
        closed.push_back({event.order, std::move(open.instance)});
        open_.erase(it);
        return;
      }
      case LaneHearing::Event::Kind::kReset:
        open_.erase(it);
        ++counts_.cut_by_gap;
        return;
    }
  }
}

void SyscallTracker::Complete(SyscallInstance& s, const PartFix& fix, const PartLaneFold& lane) {
  if (const StackFrame* caller = fix.caller != SIZE_MAX ? lane.StandIn(fix.caller) : nullptr) {
    s.caller = caller->node->name;
    s.user_insns = fix.entry_insns + lane.insns - caller->entry_insns;
  }
  if (fix.untimed && lane.time_known) {  // the part's time began later than the real lane's
    s.start_ns = lane.ns;
    s.time_known = true;
    if (fix.end_known && fix.end_ns >= lane.ns) s.latency_ns = fix.end_ns - lane.ns;
  }
}

void SyscallTracker::Fold(CallStackObserver& part_observer, const PartFold& lanes) {
  auto& part = static_cast<SyscallTracker&>(part_observer);
  // The syscalls the part closed, and those it closed of the real ones, in the order they
  // closed.
  std::vector<std::pair<uint64_t, SyscallInstance>> closed;
  for (const auto& [lane, heard] : part.hearing_.lanes())
    if (auto fold = lanes.find(lane); fold != lanes.end()) GoOn(lane, heard, fold->second, closed);
  for (size_t i = 0; i < part.instances_.size(); ++i) {
    const auto& [lane, fix] = part.fixes_[i];
    Complete(part.instances_[i], fix, lanes.at(lane));
    closed.push_back({fix.order, std::move(part.instances_[i])});
  }
  std::stable_sort(closed.begin(), closed.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  for (auto& [order, instance] : closed) instances_.push_back(std::move(instance));
  for (auto& [lane, open] : part.open_) {
    const PartLaneFold& fold = lanes.at(lane);
    Complete(open.instance, open.fix, fold);
    open.depth = fold.RealIndex(open.depth);
    open.fix = PartFix{};
    open_.emplace(lane, std::move(open));
  }
  counts_.cut_by_gap += part.counts_.cut_by_gap;
  ListenToKernelEntriesOnly(open_.empty());
}

}  // namespace ptprof::syscalls
