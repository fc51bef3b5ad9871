#pragma once
// FindJoin answers "where does the decode of one trace segment hand over to the next one's?":
// the decode of a segment runs on past its cut into the next segment, so the two decodes overlap;
// where the previous one's trustworthy events from some point on equal a run of the next one's,
// field for field, the next decode has caught up with the uncut decode, and the stream goes on
// with it. No join (or an ambiguous one) means the pieces cannot be stitched.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "src/model/event_chunks.h"
#include "decoders/pt/psb_segments.h"
#include "src/model/trace_event.h"

namespace ptprof::pt {

struct DecodedSegment {
  TraceSegment range;
  EventChunks events;  // in decode order, offsets in the whole trace
  // events[0, trusted) are what an uncut decode emits there: decoded before range.trust_end and
  // before the decoder met the end of its bytes.
  size_t trusted = 0;
  // The first event at or past the cut (range.cut), as collected; events.size() if none.
  size_t at_cut = SIZE_MAX;
};

struct SegmentJoin {
  size_t prev_end = 0;    // the stream takes prev.events[from, prev_end) ...
  size_t next_begin = 0;  // ... then next.events[next_begin, ...)
};

// How far around the cut FindJoin looks for the handover, in events: up to `before_cut` before
// prev's first event at or past the cut and `after_cut` after it, against next's first
// `next_startup` events (the next decode begins with a few events of its own: its first block
// begins at the PSB's IP, not where the previous block began). A stream of instructions (decode
// --insn), several events a block whose first ones differ in time between the two decodes, looks
// about as many blocks far.
struct JoinWindows {
  size_t before_cut, after_cut, next_startup;
};
inline constexpr JoinWindows kBlockJoinWindows{8, 64, 256};
inline constexpr JoinWindows kInsnJoinWindows{128, 1024, 4096};

// `prev_from`: the first of prev's events the stream takes (where prev joined its predecessor).
std::optional<SegmentJoin> FindJoin(const DecodedSegment& prev, size_t prev_from,
                                    const DecodedSegment& next);

// How many of next's first events FindJoin(prev, prev_from, next) can read at most, next beginning
// at `next_begin`: a decode that streams its events on can hold back only these, and FindJoin on
// them answers as on all of next's (so long as none of them is untrusted for another reason).
size_t NextEventsFindJoinReads(const DecodedSegment& prev, size_t prev_from, uint64_t next_begin);

}  // namespace ptprof::pt
