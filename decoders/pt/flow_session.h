#pragma once
// DecodeFlow answers "what did this raw PT trace execute?" for callers outside decoders/pt: it runs
// the flow decoder over a trace and the images and sends model TraceEvents to a sink. No libipt
// types cross this header.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <span>
#include <vector>

#include "decoders/pt/flow_options.h"
#include "decoders/pt/pt_params.h"
#include "decoders/pt/tsc_span.h"
#include "sideband/image_set.h"
#include "src/model/event_sink.h"
#include "src/model/result.h"

namespace ptprof::pt {

// One task (thread) and the address space its code is read from.
struct RunningTask {
  int32_t pid = kUnknownId;
  int32_t tid = kUnknownId;
  size_t space = 0;  // an address space of the TaskTimeline
  bool operator==(const RunningTask&) const = default;
};

// TaskTimeline answers "whose code runs at this point of the trace?" for a trace that switches
// between tasks (known from sideband, e.g. perf's context switch records): the task at a trace
// time and the code mapped in each address space.
class TaskTimeline {
 public:
  virtual ~TaskTimeline() = default;
  // The task running at trace time `tsc` (nullopt: before the trace's first timing packet).
  // `same`, when given and `tsc` is known, is set to the times around it with the same answer
  // (at least `tsc`).
  virtual RunningTask TaskAt(std::optional<uint64_t> tsc, TscSpan* same) = 0;
  // The code of address space `space`, later sections hiding what they overlap.
  virtual std::vector<const ImageSection*> SpaceSections(size_t space) const = 0;
  // A timeline giving the same answers for a decode on another thread (the PSB segments of a
  // parallel decode), where this one keeps state between calls (a cache); null when this one
  // may be asked from several threads at once.
  virtual std::unique_ptr<TaskTimeline> ForThread() const { return nullptr; }
};

// Which block walker decodes the flow: libipt's block decoder, or ptprof's fast engine
// (decoders/pt/fast), which gives the same events and hands every piece of the trace it does not
// handle to libipt (FlowSummary says how many).
enum class FlowEngine { kLibipt, kFast };
// The process-wide default of FlowRequest::engine (the command line's --engine sets it);
// initially the fast engine.
void SetDefaultFlowEngine(FlowEngine engine);
FlowEngine DefaultFlowEngine();

namespace fast {
class CodeGraphPool;
}

struct FlowRequest {
  PtParams params;
  FlowEngine engine = DefaultFlowEngine();
  // Instructions instead of blocks: libipt's instruction decoder's, or the fast engine's blocks
  // expanded into the same (insn_expander.h).
  bool insns = false;
  bool ticks = false;        // a tick event at each timing packet
  // The fast engine's batches say which of their blocks are copies of a TNT run
  // (BlockBatch::runs), for a consumer that works a run out once (the delta profile). Off by
  // default: marking costs a store per run, 2 % of a bare decode.
  bool mark_runs = false;
  int32_t cpu = kUnknownId;  // the CPU the trace was recorded on, for event headers
  int32_t pid = kUnknownId;  // the task that was traced, for event headers (per-thread traces)
  int32_t tid = kUnknownId;
  // When set, the decoder reads the code of the task TaskAt names before each block and events
  // carry its pid/tid, with a ContextSwitch{kSideband} event where it changes; `images` then only
  // serves until the first block.
  TaskTimeline* tasks = nullptr;
  // Parallel decode over PSB segments (decoders/pt/parallel_flow.h): the threads (0: the process
  // default, SetDefaultDecodeJobs) and the segment size in bytes (0: the process default).
  unsigned jobs = 0;
  uint64_t segment_bytes = 0;
  // The loaded images and code graphs to decode with (null: made for this decode). Decodes that
  // share one against the same `images` find the fast engine's graph warm from the ones before.
  fast::CodeGraphPool* graphs = nullptr;
};

struct FlowSummary {
  uint64_t blocks = 0;
  uint64_t insns = 0;
  uint64_t gaps = 0;
  bool has_psb = false;  // the trace holds at least one PSB (else it is not Intel PT at all)
  std::vector<std::string> warnings;  // e.g. a CPU libipt knows no errata for
  uint64_t segments = 1;               // pieces decoded in parallel and stitched (1: sequential)
  // Of those, the ones whose events went to a part of the consumer on the thread that decoded
  // them (a consumer that takes its stream in parts, src/model/parted_sink.h).
  uint64_t parts = 0;
  // Of those, the ones the consumer could not fold (its part guessed wrong what came before it):
  // decoded again into the consumer directly.
  uint64_t parts_redone = 0;
  std::string redone_because;  // why the consumer refused the first of them, when it said
  std::string sequential_because;      // why the decode was (or went on) sequential, if it was asked to be parallel
  // With FlowEngine::kFast: the segments the fast engine decoded, those it handed to libipt, and
  // why it handed over the first of those (with the offset); why it was not used at all.
  uint64_t fast_segments = 0;
  uint64_t libipt_segments = 0;
  std::string fallback_because;
};

// Whether the fast engine can take this request at all (no tick events; instructions, which it
// expands from its blocks, only without tasks from sideband); when it cannot, `why` says so.
bool FastEngineApplies(const FlowRequest& request, std::string* why = nullptr);

// Decodes `trace` (one PT buffer) against `images` (or the images `request.tasks` names). Fails only when the decode cannot start (an
// empty trace, an image libipt cannot map, "--cpu auto" on a non-Intel host); bad trace data
// becomes TraceGap events and counts.
Result<FlowSummary> DecodeFlow(std::span<const uint8_t> trace, const ImageSet& images,
                               const FlowRequest& request, EventSink& sink);

}  // namespace ptprof::pt
