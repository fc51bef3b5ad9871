#pragma once
// The pieces of DecodeFlow that the sequential and the parallel decode share: decoding one run of
// trace bytes into model events (without the end-of-trace bookkeeping), and what the whole trace
// says at its end (a packet cut short) and about itself (whether it holds a PSB at all).
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "decoders/pt/flow_events.h"
#include "decoders/pt/flow_session.h"

namespace ptprof::pt {

struct FlowRangeResult {
  FlowSummary summary;  // blocks, instructions and gaps of this run only
  bool synced = false;  // the decoder found a PSB
};

// Decodes `bytes` like DecodeFlow (offsets relative to bytes[0]) but neither reports a truncated
// last packet nor ends the sink. `before_finish` (may be empty) is called when the decoder has met
// the end of `bytes`, before the events it held back are flushed.
// Events' offsets are moved by `offset_base` (where `bytes` begin in the whole trace). `pool`
// (may be null) lends the images, already loaded, to the pieces of one trace.
namespace fast {
class CodeGraphPool;
}
Result<FlowRangeResult> DecodeFlowRange(std::span<const uint8_t> bytes, const ImageSet& images,
                                        const FlowRequest& request, EventSink& sink,
                                        const std::function<void()>& before_finish,
                                        uint64_t offset_base = 0,
                                        fast::CodeGraphPool* pool = nullptr);

// DecodeFlowRange with the fast engine. When it meets what it does not handle before `trust_end`
// (an offset in `bytes`), it returns `handled` false with the reason, and what it already sent
// to `sink` must be dropped.
struct FastRangeResult {
  FlowRangeResult range;
  bool handled = true;
  std::string why;  // with the offset, when not handled
  uint64_t passed = 0;  // when not handled: how many events `sink` already has
};
// `graphs` (may be null) lends the images and code graph to decode with, shared by the pieces of
// one trace. `run_refs`: where the sink takes TNT runs as references (FlowModelOptions); the
// graph's runs must then outlive the sink's events (a lent graph's do).
Result<FastRangeResult> DecodeFlowRangeFast(std::span<const uint8_t> bytes,
                                            const ImageSet& images,
                                            const FlowRequest& request, EventSink& sink,
                                            const std::function<void()>& before_finish,
                                            uint64_t trust_end,
                                            fast::CodeGraphPool* graphs = nullptr,
                                            uint64_t offset_base = 0,
                                            RunRefWindow run_refs = {});

// Where the trace ends in the middle of a packet (that packet's offset), if it does.
std::optional<uint64_t> TruncatedPacketAt(std::span<const uint8_t> trace);

// Whether the trace holds a PSB's bytes anywhere.
bool HasPsb(std::span<const uint8_t> trace);

// The truncation gap DecodeFlow reports at `offset`.
TraceEvent TruncationGap(uint64_t offset, int32_t cpu);

}  // namespace ptprof::pt
