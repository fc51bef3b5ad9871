#pragma once
// DecodeFlow answers "what did this raw PT trace execute?" for callers outside decoders/pt: it runs
// the flow decoder over a trace and the images and sends model TraceEvents to a sink. No libipt
// types cross this header.
#include <cstdint>
#include <string>
#include <vector>

#include "decoders/pt/flow_options.h"
#include "decoders/pt/pt_params.h"
#include "sideband/image_set.h"
#include "src/model/event_sink.h"
#include "src/model/result.h"

namespace ptprof::pt {

struct FlowRequest {
  PtParams params;
  bool insns = false;        // instructions (libipt's instruction decoder) instead of blocks
  bool ticks = false;        // a tick event at each timing packet
  int32_t cpu = kUnknownId;  // the CPU the trace was recorded on, for event headers
};

struct FlowSummary {
  uint64_t blocks = 0;
  uint64_t insns = 0;
  uint64_t gaps = 0;
  bool has_psb = false;  // the trace holds at least one PSB (else it is not Intel PT at all)
  std::vector<std::string> warnings;  // e.g. a CPU libipt knows no errata for
};

// Decodes `trace` (one PT buffer) against `images`. Fails only when the decode cannot start (an
// empty trace, an image libipt cannot map, "--cpu auto" on a non-Intel host); bad trace data
// becomes TraceGap events and counts.
Result<FlowSummary> DecodeFlow(const std::vector<uint8_t>& trace, const ImageSet& images,
                               const FlowRequest& request, EventSink& sink);

}  // namespace ptprof::pt
