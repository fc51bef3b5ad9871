#pragma once
// DecodeFlowInParts answers DecodeFlowParallel's question for a consumer that takes its stream in
// parts (src/model/parted_sink.h): every thread decodes whole PSB segments, each straight into a
// part of the consumer of its own (decoders/pt/part_segment.h), and the calling thread folds the
// parts in order, passing on itself only the few events around each join that FindJoin decides.
// So the consumer's work is shared like the decode's, and nothing is held in memory but the
// events around the joins and the parts not folded yet (at most `kPartsAhead` per thread).
// Where two segments do not join, the rest is decoded in one piece after what was folded, as in
// DecodeFlowParallel; the consumer sees exactly the events of the sequential decode either way.
#include <cstdint>
#include <span>

#include "decoders/pt/flow_session.h"
#include "decoders/pt/parallel_flow.h"
#include "src/model/parted_sink.h"

namespace ptprof::pt {

// Segments decoded ahead of the one to fold next, per thread.
inline constexpr size_t kPartsAhead = 2;

// Segments per thread a parted decode needs when the consumer chose their size (PartedSink::
// PartBytes) and the user did not: with fewer, the trace decodes as if the consumer took no
// parts. A part's output waits in
// memory until it is folded (in fresh pages, at first), each segment decodes on past its cut and
// its head and tail are handed over whole, and two or three parts share too little to pay for
// that: `decode --insn` of a 100 KiB trace took 0.24 s in one piece, 0.77 s in 3 parts on 2
// threads.
inline constexpr size_t kMinPartsPerThread = 2;

// The segment size of a parted decode of `trace_bytes` on `jobs` threads when none was asked for:
// a quarter of each thread's share, from 256 KiB to 1 MiB, and on a long trace a
// kLongSegmentsPerThread-th of each thread's share, up to kLongSegmentBytes. Parted segments hold
// nothing but their heads and tails in memory, so they can be longer than those of
// DecodeFlowParallel, and longer segments cost less per byte: each decodes on past its cut, to
// the second PSB after it, hands its head and tail over whole, and its part learns the code it
// runs afresh (python's 85 MB trace: a two-thread decode's CPU time over one thread's from 1.05
// to 1.14 with 1 MiB segments to 0.99 to 1.07 with 4 MiB; docs/performance.md). At least eight
// segments a thread keep the threads' shares even where segments differ in cost (a compiler's
// took 30 to 150 ms each, and gained nothing from fewer); below 16 MiB a thread, 1 MiB does.
inline constexpr uint64_t kLongSegmentsPerThread = 8;
inline constexpr uint64_t kLongSegmentBytes = 4u << 20;
uint64_t PartedSegmentBytes(uint64_t trace_bytes, unsigned jobs);

// Decodes `trace` along `plan` (two segments or more) into `sink`, as DecodeFlow does.
Result<FlowSummary> DecodeFlowInParts(std::span<const uint8_t> trace, const ImageSet& images,
                                      const FlowRequest& request, const ParallelPlan& plan,
                                      PartedSink& sink);

}  // namespace ptprof::pt
