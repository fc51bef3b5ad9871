// SyscallSubtrees watching a CallStackBuilder that takes its stream in parts: a part's observer
// captures the syscalls of its part as the observer of one stream would and keeps the wanted ones'
// trees aside in the order they closed, hears each lane from its beginning (LaneHearing) so that
// the fold can go on with a syscall the real observer has open there, and hands over the captures
// still open at its end.
#include <algorithm>

#include "src/analyses/stackdiff/syscall_subtrees.h"

namespace ptprof::stackdiff {

std::unique_ptr<CallStackObserver> SyscallSubtrees::NewPart() const {
  auto part = std::make_unique<SyscallSubtrees>(wanted_);
  part->in_part_ = true;
  part->keep_aside_ = true;
  return part;
}

std::string SyscallSubtrees::Refusal(const CallStackObserver& part,
                                     const PartFold& lanes) const {
  return static_cast<const SyscallSubtrees&>(part).hearing_.UnheardSyscall(lanes);
}

void SyscallSubtrees::GoOn(int32_t lane, const LaneHearing::Lane& heard, const PartLaneFold& fold) {
  auto it = open_.find(lane);
  if (it == open_.end()) return;
  ++gone_on_;
  for (const LaneHearing::Event& event : heard.heard)
    if (!Apply(it, event.kind, LaneHearing::RealIndex(event, fold),
               event.node ? std::string_view(event.node->name) : std::string_view(), event.insns,
               event.ns, event.order))
      return;
}

void SyscallSubtrees::Fold(CallStackObserver& part_observer, const PartFold& lanes) {
  auto& part = static_cast<SyscallSubtrees&>(part_observer);
  // The instances the part closed and those it closed of the real ones, merged in the order they
  // closed.
  keep_aside_ = true;
  for (const auto& [lane, heard] : part.hearing_.lanes())
    if (auto fold = lanes.find(lane); fold != lanes.end()) GoOn(lane, heard, fold->second);
  keep_aside_ = false;
  for (auto& closed : part.aside_) aside_.push_back(std::move(closed));
  std::stable_sort(aside_.begin(), aside_.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  for (const auto& [order, tree] : aside_) merged_.Merge(tree);
  aside_.clear();
  // The captures still open go on here, on the real stack.
  while (!part.open_.empty()) {
    auto node = part.open_.extract(part.open_.begin());
    node.mapped().base = lanes.at(node.key()).RealIndex(node.mapped().base);
    open_.insert(std::move(node));
  }
  instances_ += part.instances_;
  incomplete_ += part.incomplete_;
  for (const auto& [name, count] : part.seen_) seen_[name] += count;
  ListenToKernelEntriesOnly(open_.empty());
}

}  // namespace ptprof::stackdiff
