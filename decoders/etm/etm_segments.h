#pragma once
// Where a CoreSight trace buffer is cut to decode it on several threads, and where the decodes of
// two neighbouring pieces hand over to each other.
//
// A piece is decoded by a fresh OpenCSD decode tree from its first byte (a frame boundary for
// formatted buffers) on past its end into the next piece: each source's packet processor waits
// for its next alignment synchronisation (A-sync) and then decodes as the uncut decode does.
// Nothing is flushed at a piece's end (no end-of-trace), so the events of a piece's decode are
// a prefix of what the same decoder emits when fed on to the end. Where the previous piece's
// events from some point on equal a run of the next piece's events field for field, in exactly
// one line-up, the next decode has caught up with the uncut one, and the stream goes on with it.
#include <bitset>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "src/model/event_chunks.h"
#include "src/model/trace_event.h"

namespace ptprof::etm {

struct EtmSegment {
  uint64_t begin = 0;  // the first byte decoded
  uint64_t cut = 0;    // where the next piece begins (the end of the buffer for the last)
  uint64_t end = 0;    // the decode reads on to here
};

// Pieces of about `segment_bytes` over the first `usable` bytes, cut at multiples of `align`
// (16 for frame-formatted buffers), each read on past its cut by `overlap` bytes. Fewer than two
// pieces: not worth cutting.
std::vector<EtmSegment> PlanEtmSegments(uint64_t usable, uint64_t segment_bytes, uint64_t align,
                                        uint64_t overlap);

// How far a piece reads into the next one: enough for the sources of a multi-source buffer to
// meet an A-sync and a timestamp each, as a share of the piece (an eighth), at least 16 KiB.
// Every byte of it is decoded twice, and the events the stitching takes from it are passed on
// by one thread: a quarter cost TC2 repeated 100 times on two threads 1.42x over one against
// 1.57x (docs/performance.md).
uint64_t EtmOverlapFor(uint64_t segment_bytes);

struct EtmJoin {
  size_t prev_end = 0;    // the stream takes prev[from, prev_end) ...
  size_t next_begin = 0;  // ... then next[next_begin, ...)
};

// Trace IDs (0 to 127) as sets.
using TraceIds = std::bitset<128>;

// `synced` and the trace IDs with an element other than "no sync" among `events` from `from` on
// (`marks`: 0x80 | trace ID per element): the sources a join after those events must find
// synchronised (FindEtmJoin's must_sync).
TraceIds SyncedIn(const EventChunks& events, const std::vector<uint8_t>& marks, size_t from,
                  TraceIds synced);

// Where the decode of the previous piece (whose events from `prev_from` on are still to be
// passed on) hands over to the next piece's decode, which began at byte `next_begin`: the
// earliest event of prev at or after that byte from which all of prev's remaining events equal
// a run of next's, with exactly one such run, and where next's decoder has synchronised every
// source in `must_sync` (an element other than "no sync" of that trace ID, as `next_marks` say:
// 0x80 | trace ID per element) by the end of that run. A source that is quiet where the pieces
// overlap proves nothing by agreeing; without this, next would lose its events until its next
// A-sync. None: the pieces cannot be stitched.
std::optional<EtmJoin> FindEtmJoin(const EventChunks& prev, size_t prev_from,
                                   const EventChunks& next,
                                   const std::vector<uint8_t>& next_marks, uint64_t next_begin,
                                   const TraceIds& must_sync);

}  // namespace ptprof::etm
