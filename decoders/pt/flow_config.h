#pragma once
// FlowConfig answers "how do we set up libipt's flow decoders for this trace?": it turns PtParams
// (CPU, timing, address filters) and the decoder choices into a pt_config. Only decoders/pt sees it.
#include <cstdint>
#include <string>

#include <intel-pt.h>

#include "decoders/pt/flow_options.h"
#include "decoders/pt/pt_params.h"
#include "src/model/result.h"
#include "src/model/trace_event.h"

namespace ptprof::pt {

// Fills `config` (everything but the trace buffer). Errata come from the CPU; when libipt does
// not know the CPU, `errata_status` receives its negative error code and decoding goes on without
// workarounds (as ptxed does). "--cpu auto" on a CPU that is not Intel's applies none either.
Status FillPtConfig(const PtParams& params, const FlowOptions& options, pt_config& config,
                    int& errata_status);

}  // namespace ptprof::pt

namespace ptprof::pt {

// libipt's execution mode in the model's terms.
inline ExecMode ToExecMode(pt_exec_mode mode) {
  switch (mode) {
    case ptem_16bit: return ExecMode::k16Bit;
    case ptem_32bit: return ExecMode::k32Bit;
    case ptem_64bit: return ExecMode::k64Bit;
    default: return ExecMode::kUnknown;
  }
}

}  // namespace ptprof::pt
