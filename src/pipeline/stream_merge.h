#pragma once
// MergeStreams answers "in which order do the events of several trace streams come out?": by time
// across the streams (a k-way merge), each stream's own order kept. Every stream is decoded by its
// own producer on its own thread into a bounded queue, so memory stays bounded whatever the
// trace's length: a producer waits while its queue is full, the merge waits for the stream whose
// next event it needs.
//
// The order: an event's key is its time_ns when known, else its tsc, else the key of the event
// before it in its stream (0 at the start: untimed leading events come first); a key is never
// smaller than the one before it in the same stream (a timestamp going backwards keeps its
// stream's order). Equal keys come out in stream order (the first producer's first).
#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "src/model/event_sink.h"

namespace ptprof {

// Decodes one stream, sending its events to the sink in the stream's order. It must not call
// the sink's OnEnd (the merge does not forward it).
using StreamProducer = std::function<void(EventSink& sink)>;

// Runs every producer and sends the merged events to `out`; returns when all are done. Does not
// call out.OnEnd(). One producer runs on the calling thread without a queue. `queue_events`
// bounds the events buffered per stream. What a producer throws (out of memory), or a thread
// that cannot be started, is thrown here once the other streams have ended.
void MergeStreams(const std::vector<StreamProducer>& producers, EventSink& out,
                  size_t queue_events = 8192);

// The merge key of `event` given the key of the event before it in its stream.
uint64_t MergeKey(const TraceEvent& event, uint64_t previous);

}  // namespace ptprof
