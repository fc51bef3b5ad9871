#pragma once
// A block event for the tests of the sinks that read taken branches from blocks (FlowEdges):
// thread `tid`, from `first` to `last`, ending in `end`.
#include "src/model/trace_event.h"

namespace ptprof::testing {

inline TraceEvent BranchBlock(int32_t tid, uint64_t first, uint64_t last, BlockEnd end) {
  TraceEvent e;
  e.header.tid = tid;
  ExecBlock b;
  b.first_ip = first;
  b.last_ip = last;
  b.end = end;
  e.body = b;
  return e;
}

}  // namespace ptprof::testing
