#pragma once
// SameEvent answers "are these two model events the same, field for field?": the header (time,
// TSC, offset, CPU, task) and every field of the body. The parallel decoders (PT and ETM) use it to prove that
// two independently decoded pieces of a trace agree where they overlap.
#include "src/model/trace_event.h"

namespace ptprof {

bool SameEvent(const TraceEvent& a, const TraceEvent& b);
// The same, the header's TSC aside.
bool SameEventBesidesTsc(const TraceEvent& a, const TraceEvent& b);

}  // namespace ptprof
