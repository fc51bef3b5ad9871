#include "src/analyses/crossval/flow_branches.h"

#include <variant>

namespace ptprof {

void FlowBranches::OnEvent(const TraceEvent& event) {
  const EventHeader& h = event.header;
  const int64_t thread = FlowThread(h.cpu, h.tid);
  const auto* block = std::get_if<ExecBlock>(&event.body);
  if (!block) {
    if (BreaksBranchRun(event)) {
      pending_[thread].branch.taken = false;
      ++breaks_;
      on_break_(thread);
    }
    return;
  }
  Pending& p = pending_[thread];
  const BlockEndRole role =
      p.branch.Follow(block->first_ip, block->last_ip, block->end, [&](uint64_t from, uint64_t to) {
        BranchRecord r;
        r.from = from;
        r.to = to;
        ++branches_;
        on_branch_(p.site, r);
      });
  if (role == BlockEndRole::kTaken)
    p.site = {thread, h.pid, h.cpu, h.time_ns == kUnknownTime ? 0 : h.time_ns, h.offset};
  if (role == BlockEndRole::kBreaks) {
    ++breaks_;
    on_break_(thread);
  }
}

void FlowBranches::OnEnd() {
  for (auto& [thread, p] : pending_) {
    p.branch.taken = false;
    on_break_(thread);
  }
}

}  // namespace ptprof
