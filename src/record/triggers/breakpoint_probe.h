#pragma once
// Whether hardware execute breakpoints (perf_event_open, PERF_TYPE_BREAKPOINT) fire here. Some
// virtual machines accept such a breakpoint and never report a hit; a recording that relies on
// them (the software branch tracer, addr= triggers) then finds nothing, and should say why.
#include <string>

namespace ptprof::record::triggers {

// Places an execute breakpoint on a function of ptprof's own, for the calling thread, calls the
// function three times and reads the count. True when it counted three hits; otherwise `why`
// (when given) says what happened, in a phrase.
bool ExecuteBreakpointsFire(std::string* why = nullptr);

}  // namespace ptprof::record::triggers
