#include "src/analyses/crossval/flow_branches.h"

#include <variant>

namespace ptprof {

void FlowBranches::OnEvent(const TraceEvent& event) {
  const EventHeader& h = event.header;
  const int64_t thread = h.tid >= 0 ? h.tid : -1 - static_cast<int64_t>(h.cpu);
  const auto* block = std::get_if<ExecBlock>(&event.body);
  if (!block) {
    // Gaps, toggles and context switches of a thread break its run; other events do not touch
    // the control flow.
    if (std::holds_alternative<TraceGap>(event.body) ||
        std::holds_alternative<TraceToggle>(event.body)) {
      pending_[thread].taken = false;
      ++breaks_;
      on_break_(thread);
    }
    return;
  }
  Pending& p = pending_[thread];
  if (p.taken) {
    BranchRecord r;
    r.from = p.from;
    r.to = block->first_ip;
    ++branches_;
    on_branch_(p.site, r);
  }
  switch (RoleOf(block->end)) {
    case BlockEndRole::kTaken:
      p.taken = true;
      p.from = block->last_ip;
      p.site = {thread, h.pid, h.cpu, h.time_ns == kUnknownTime ? 0 : h.time_ns, h.offset};
      break;
    case BlockEndRole::kContinues:
      p.taken = false;
      break;
    case BlockEndRole::kBreaks:
      p.taken = false;
      ++breaks_;
      on_break_(thread);
      break;
  }
}

void FlowBranches::OnEnd() {
  for (auto& [thread, p] : pending_) {
    p.taken = false;
    on_break_(thread);
  }
}

}  // namespace ptprof
