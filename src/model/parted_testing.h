#pragma once
// For the tests of consumers that take their stream in parts (src/model/parted_sink.h): feeding a
// stretch of events to a sink as a decode would (blocks of a thread in batches), feeding a stream
// cut into parts and folding them, and random places to cut.
#include <algorithm>
#include <memory>
#include <random>
#include <vector>

#include "src/model/block_batch.h"
#include "src/model/parted_sink.h"

namespace ptprof::testing {

// The events [from, to) to `sink`: blocks of one cpu/pid/tid in a row as a batch, the rest one by
// one.
inline void FeedEvents(EventSink& sink, const std::vector<TraceEvent>& events, size_t from, size_t to,
                       bool batched) {
  std::vector<PackedEvent> packed;
  BlockBatch batch;
  auto flush = [&] {
    if (packed.empty()) return;
    batch.blocks = packed;
    sink.OnBlocks(batch);
    packed.clear();
  };
  for (size_t i = from; i < to; ++i) {
    const TraceEvent& event = events[i];
    const EventHeader& h = event.header;
    // A batch's blocks carry a TSC, not a time: only blocks that pack (no time yet) go in batches.
    const bool packable = batched && Packable(event);
    if (!packable || h.tid != batch.tid || h.pid != batch.pid || h.cpu != batch.cpu) flush();
    if (!packable) {
      sink.OnEvent(event);
      continue;
    }
    batch.cpu = h.cpu;
    batch.pid = h.pid;
    batch.tid = h.tid;
    packed.emplace_back();
    PackBlock(event, packed.back());
  }
  flush();
}

// As a decode in parts does: the events between consecutive `cuts` each to a part of `sink`,
// folded in order where it can, else taken directly. Counts the parts folded and refused, and
// the refused ones whose refusal gave no reason.
struct PartsFolded {
  size_t folded = 0, refused = 0, unexplained = 0;
};
inline PartsFolded FeedInParts(PartedSink& sink, const std::vector<TraceEvent>& events,
                               const std::vector<size_t>& cuts, bool batched) {
  PartsFolded count;
  for (size_t i = 0; i + 1 < cuts.size(); ++i) {
    std::unique_ptr<EventSink> part = i ? sink.NewPart() : sink.NewFirstPart();
    FeedEvents(*part, events, cuts[i], cuts[i + 1], batched);
    part->OnEnd();
    if (sink.CanFold(*part)) {
      sink.Fold(std::move(part));
      count.folded += 1;
    } else {
      count.unexplained += sink.Refusal(*part).empty();
      FeedEvents(sink, events, cuts[i], cuts[i + 1], batched);
      count.refused += 1;
    }
  }
  return count;
}

// Where to cut a stream of `size` events into about `parts` parts: 0, the cuts in order, `size`.
inline std::vector<size_t> RandomCuts(size_t size, size_t parts, std::mt19937& random) {
  std::vector<size_t> cuts;
  cuts.reserve(parts + 1);
  cuts.push_back(0);
  cuts.push_back(size);
  while (cuts.size() < parts + 1)
    cuts.push_back(std::uniform_int_distribution<size_t>(1, size - 1)(random));
  std::sort(cuts.begin(), cuts.end());
  cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
  return cuts;
}

// The cuts the tests of parted consumers try on a stream of `size` events: about 2, 7 and 40
// parts, drawn from `seed`.
inline std::vector<std::vector<size_t>> SomeRandomCuts(size_t size, uint32_t seed) {
  std::mt19937 random(seed);
  std::vector<std::vector<size_t>> cuts;
  for (size_t parts : {2, 7, 40}) cuts.push_back(RandomCuts(size, parts, random));
  return cuts;
}

}  // namespace ptprof::testing
