// The report of `ptprof impact`: per syscall kind the extra instructions and time per call and the
// tracer-only code, the whole flow's tracer-only code, and the summary paragraph; text or JSON.
#pragma once

#include <cstdio>

#include "src/analyses/impact/tracer_impact.h"

namespace ptprof::impact {

void WriteImpactText(std::FILE* out, const ImpactResult& result, size_t top);
void WriteImpactJson(std::FILE* out, const ImpactResult& result, size_t top);

}  // namespace ptprof::impact
