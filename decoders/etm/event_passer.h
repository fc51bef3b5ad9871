#pragma once
// EventPasser hands the events of a CoreSight decode in pieces (etm_parallel_decode.cc,
// etm_parted_decode.cc) on to the consumer in stream order, counting them as the decode in one
// piece counts, and stamping what a piece could not: a piece's decode stamps an element with the
// last timestamp of its trace ID that it met itself, so before its first one it has none, where
// the decode in one piece has the last one before the piece. The passer keeps those and stamps
// such elements with them.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "decoders/etm/etm_decoder.h"
#include "decoders/etm/etm_segments.h"
#include "src/model/event_sink.h"

namespace ptprof::etm {

// What a consumer's part took of a piece (etm_piece_split.h), as the passer would have seen it.
struct PartTally {
  EtmDecodeStats counts;  // elements, ranges, instructions and gaps
  TraceIds synced;        // trace IDs with an element other than "no sync"
  // Trace IDs with an element of no TSC (other than a timestamp): the passer would have stamped
  // those had it known a timestamp of that ID.
  TraceIds unstamped;
  std::optional<uint64_t> last_timestamp[128];  // the last timestamp of each trace ID

  // Counts `event`, whose mark (etm_decoder.h: DecodePiece) is `mark`.
  void Add(const TraceEvent& event, uint8_t mark);
};

class EventPasser : public EventSink {
 public:
  EventPasser(EventSink& sink, EtmDecodeStats& total) : sink_(&sink), total_(total) {}

  // From now on the events passed on go to `sink` (a pipe in front of the consumer, or the
  // consumer again).
  void SendTo(EventSink& sink) { sink_ = &sink; }

  // From now on OnEvent takes the events of a decode whose marks are `marks`, of which it passes
  // on those numbered [skip, until).
  void Follow(const std::vector<uint8_t>& marks, size_t skip, size_t until = SIZE_MAX) {
    marks_ = &marks;
    skip_ = skip;
    until_ = until;
    seen_ = 0;
  }
  void OnEvent(const TraceEvent& event) override;

  // Passes `event` on, whose mark is `mark`.
  void Pass(const TraceEvent& event, uint8_t mark);
  // What a folded part passed on for it: its counts, the sources it synchronised, its timestamps.
  void Absorb(const PartTally& tally);
  // A trace ID of `ids` the passer knows a timestamp of (-1: none): a part with an unstamped
  // element of that ID differs from what the passer would have passed on.
  int StampsOneOf(const TraceIds& ids) const;

  // The trace IDs with an element other than "no sync" passed on so far.
  const TraceIds& synced() const { return synced_; }

 private:
  void Count(const TraceEvent& event);

  EventSink* sink_;
  EtmDecodeStats& total_;
  const std::vector<uint8_t>* marks_ = nullptr;
  size_t skip_ = 0, until_ = SIZE_MAX, seen_ = 0;
  std::optional<uint64_t> timestamp_of_id_[128];
  TraceIds synced_;
};

}  // namespace ptprof::etm
