#include "decoders/etm/event_passer.h"

#include "decoders/etm/element_events.h"

namespace ptprof::etm {

namespace {

void CountInto(const TraceEvent& event, EtmDecodeStats& counts) {
  if (const auto* b = std::get_if<ExecBlock>(&event.body)) {
    ++counts.ranges;
    counts.instructions += b->insns;
  } else if (std::holds_alternative<TraceGap>(event.body)) {
    ++counts.gaps;
  }
}

const Marker* TimestampOf(const TraceEvent& event) {
  const auto* marker = std::get_if<Marker>(&event.body);
  return marker && marker->kind == Marker::Kind::kTimestamp ? marker : nullptr;
}

}  // namespace

void PartTally::Add(const TraceEvent& event, uint8_t mark) {
  if (mark & 0x80) {
    ++counts.elements;
    const uint8_t id = mark & 0x7f;
    if (!IsNoSync(event)) synced.set(id);
    if (const Marker* timestamp = TimestampOf(event))
      last_timestamp[id] = timestamp->value;
    else if (event.header.tsc == kUnknownTime)
      unstamped.set(id);
  }
  CountInto(event, counts);
}

void EventPasser::OnEvent(const TraceEvent& event) {
  const size_t number = seen_++;
  if (number < skip_ || number >= until_) return;
  Pass(event, marks_ && !marks_->empty() ? marks_->back() : 0);
}

void EventPasser::Pass(const TraceEvent& event, uint8_t mark) {
  if (mark & 0x80) {
    ++total_.elements;
    const uint8_t id = mark & 0x7f;
    if (!IsNoSync(event)) synced_.set(id);
    if (const Marker* timestamp = TimestampOf(event)) {
      timestamp_of_id_[id] = timestamp->value;
    } else if (event.header.tsc == kUnknownTime && timestamp_of_id_[id]) {
      TraceEvent stamped = event;
      stamped.header.tsc = *timestamp_of_id_[id];
      Count(stamped);
      return;
    }
  }
  Count(event);
}

void EventPasser::Count(const TraceEvent& event) {
  CountInto(event, total_);
  sink_->OnEvent(event);
}

void EventPasser::Absorb(const PartTally& tally) {
  total_.elements += tally.counts.elements;
  total_.ranges += tally.counts.ranges;
  total_.instructions += tally.counts.instructions;
  total_.gaps += tally.counts.gaps;
  synced_ |= tally.synced;
  for (size_t id = 0; id < 128; ++id)
    if (tally.last_timestamp[id]) timestamp_of_id_[id] = tally.last_timestamp[id];
}

int EventPasser::StampsOneOf(const TraceIds& ids) const {
  for (size_t id = 0; id < 128; ++id)
    if (ids.test(id) && timestamp_of_id_[id]) return static_cast<int>(id);
  return -1;
}

}  // namespace ptprof::etm
