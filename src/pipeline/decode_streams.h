#pragma once
// DecodeStreams answers "what did the session's streams execute, in time order?": it decodes each
// selected stream with the session's PT parameters (following its tasks' context switches and
// address spaces when the session knows them), stamps every event with its stream's cpu/pid/tid
// and, where the session has a clock, its perf time, and merges the streams by time into one sink
// (see MergeStreams for the order). Per-stream outcomes are returned for the caller to report.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "decoders/pt/flow_session.h"
#include "src/model/event_sink.h"
#include "src/pipeline/session.h"

namespace ptprof {

struct DecodeStreamsOptions {
  bool insns = false;  // instructions instead of blocks
  bool ticks = false;  // tick events at timing packets
  // Batches say which of their blocks are TNT runs (pt::FlowRequest::mark_runs), for a consumer
  // that works a run out once.
  bool mark_runs = false;
  // The fast engine's code graphs to decode each stream with, by the stream's index in
  // session.manifest.streams (none, or a null answer: made for that decode). A caller that
  // decodes the same streams again and lends the same ones finds them warm (as a long trace
  // finds its graph after its first stretch).
  std::function<pt::fast::CodeGraphPool*(size_t stream)> graphs;
};

struct StreamOutcome {
  size_t stream = 0;                  // index into session.manifest.streams
  std::optional<pt::FlowSummary> summary;  // absent: the decode could not start
  std::string error;                  // why it could not
  std::optional<TraceGap> first_gap;  // the stream's first gap, for a closing warning
  uint64_t first_gap_offset = 0;
};

// Decodes the streams `selected` (indices into session.manifest.streams) into `out`, merged by
// time; does not call out.OnEnd(). A stream called "raw" (a raw trace) is CPU 0 by convention.
// How a stream was decoded, for --verbose: "decoded in 24 PSB segments (24 consumed in parts on
// the decoding threads); sequential because ...".
std::string DescribeDecode(const pt::FlowSummary& summary);

std::vector<StreamOutcome> DecodeStreams(const Session& session, const std::vector<size_t>& selected,
                                         const DecodeStreamsOptions& options, EventSink& out);

}  // namespace ptprof
