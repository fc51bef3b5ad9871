// EtmDecoder::DecodeParallel: a CoreSight buffer decoded in pieces on several threads and
// stitched where neighbouring decodes agree (etm_segments.h), so that the sink sees exactly the
// events of the decode in one piece. Where two pieces do not join, this thread decodes on in one
// piece over the one that did not (etm_stretch.h) and tries the next join from there; after
// kStretchPieces pieces so, or where a piece meets a decoder error, the joins are given up and
// the stretch decodes on to the end of the buffer. Without a stretch (or where its decoder met an
// error) the rest is decoded in one piece from the start of the last piece held, whose events a
// fresh decoder repeats first (they are skipped).
// `jobs` threads decode pieces ahead (at most jobs + 1) while this thread stitches and passes
// events on.
#include <optional>

#include "decoders/etm/element_events.h"
#include "decoders/etm/etm_decoder.h"
#include "decoders/etm/etm_piece_joins.h"
#include "decoders/etm/etm_piece_workers.h"
#include "decoders/etm/etm_segments.h"
#include "decoders/etm/etm_stretch.h"
#include "decoders/etm/event_passer.h"

namespace ptprof::etm {

namespace {

struct Piece {
  EventChunks events;  // packed: about 40 bytes a block
  std::vector<uint8_t> marks;  // per event: 0x80 | trace ID for an element (see DecodePiece)
  EtmDecodeStats stats;
};

class Collect : public EventSink {
 public:
  explicit Collect(EventChunks& out) : out_(out) {}
  void OnEvent(const TraceEvent& event) override { out_.push_back(event); }

 private:
  EventChunks& out_;
};

// The offset of the first "no sync" element other than a decoder's first.
std::optional<uint64_t> LostSync(const EventChunks& events) {
  for (size_t k = 0; k < events.size(); ++k)
    if (IsNoSync(events[k]) && !IsDecoderStart(events[k])) return events[k].header.offset;
  return std::nullopt;
}

}  // namespace

std::string HowDecoded(const EtmDecodeStats& stats) {
  if (stats.segments < 2) return "decoded in one piece";
  std::string text = "decoded in " + std::to_string(stats.segments) + " segments, " +
                     std::to_string(stats.joined) + " joined";
  if (stats.parts || stats.parts_redone)
    text += ", the consumer's parts " + std::to_string(stats.parts) + " folded";
  if (stats.parts_redone)
    text += " and " + std::to_string(stats.parts_redone) + " decoded again because " +
            stats.redone_because;
  if (stats.stretched)
    text += ", " + std::to_string(stats.stretched) +
            " that did not join decoded again in one piece with the one before (the first because " +
            stats.stretched_because + ")";
  if (!stats.sequential_because.empty())
    text += "; the rest in one piece because " + stats.sequential_because;
  if (stats.rest_parts || stats.rest_parts_refused)
    text += ", consumed on a second thread in " + std::to_string(stats.rest_parts) + " parts" +
            (stats.rest_parts_refused    ? " (then directly: a part was refused)"
             : stats.rest_consumer_light ? " (then directly: the consumer's work is light)"
                                         : "");
  return text;
}

EtmDecodeStats EtmDecoder::DecodeParallel(const std::vector<uint8_t>& trace,
                                          const std::vector<EtmSegment>& plan, unsigned jobs,
                                          EventSink& sink) {
  PieceJoins joins(*this, trace, plan, sink);  // before the pieces, which it outlives
  EtmDecodeStats& total = joins.total();
  EventChunkPool& pool = joins.pool();
  EventPasser& pass = joins.pass();
  // The last piece taken (plan[prev_index]), or, where it did not join, the stretch decoded in
  // one piece over it; the stream has the first prev_from of their events.
  std::optional<Piece> prev;
  size_t prev_index = 0;
  size_t prev_from = 0;
  auto prev_events = [&]() -> EventChunks& {
    return joins.stretch() ? joins.stretch()->tail() : prev->events;
  };
  auto prev_marks = [&]() -> std::vector<uint8_t>& {
    return joins.stretch() ? joins.stretch()->tail_marks() : prev->marks;
  };
  // Piece i did not join (a PieceJoins reason, true where the stretch decodes on over it).
  auto stretched = [&](bool over) {
    if (over) {
      prev.reset();
      prev_from = joins.stretch()->from();
    }
    return over;
  };
  std::optional<PieceWorkers<Piece>> workers;
  workers.emplace(
      plan.size(), jobs, [this] { return Clone(); },
      [&pool] { return Piece{EventChunks(&pool), {}, {}}; },
      [&](size_t i, EtmDecoder& decoder, Piece& piece) {
        const EtmSegment& s = plan[i];
        Collect into(piece.events);
        piece.stats = decoder.DecodePiece(trace, s.begin, s.end, i + 1 == plan.size(), into,
                                          piece.marks);
      });
  // A stretch goes on from the held piece's decoder and events.
  joins.SetHeldDecode([&]() -> std::optional<HeldDecode> {
    std::unique_ptr<EtmDecoder> decoder = prev ? workers->Adopt(prev_index) : nullptr;
    if (!decoder) return std::nullopt;
    return HeldDecode{std::move(decoder), 0, std::move(prev->events), std::move(prev->marks), 0};
  });
  if (auto st = workers->Start(); !st) joins.CannotMakeDecoder(0, st.error().message);
  for (size_t i = 0; i < plan.size() && !joins.given_up(); ++i) {
    auto taken = workers->Take(i);
    if (!taken) {
      joins.CannotMakeDecoder(i, taken.error().message);
      break;
    }
    Piece piece = std::move(*taken);
    if (piece.stats.fatal_errors) {
      joins.DecoderError(i);
      break;
    }
    // A source that loses synchronisation mid-stream (a bad packet: damaged trace) leaves its
    // decoder in a state the events do not show, which a fresh decoder need not share. Each
    // piece is looked at once, as it comes. The first piece's decoder is the decode in one
    // piece's, from the same first byte: its events are that decode's, whatever they show.
    if (const std::optional<uint64_t> lost = LostSync(piece.events); lost && i > 0) {
      if (stretched(joins.LostSync(i, *lost, prev_index, prev_from))) continue;
      break;
    }
    if (i > 0) {
      // Every source synchronised in the stream so far or in what prev passes on must be
      // synchronised in the next decode by where they join.
      const EventChunks& events = prev_events();
      const std::vector<uint8_t>& marks = prev_marks();
      const TraceIds must_sync = SyncedIn(events, marks, prev_from, pass.synced());
      const std::optional<EtmJoin> join = FindEtmJoin(events, prev_from, piece.events,
                                                      piece.marks, plan[i].begin, must_sync);
      if (!join) {
        if (stretched(joins.Disagree(i, prev_index, prev_from))) continue;
        break;
      }
      for (size_t k = prev_from; k < join->prev_end; ++k) pass.Pass(events[k], marks[k]);
      if (prev) {
        prev->events.Clear();  // its chunks go back to the pool
        prev->marks.clear();
        workers->GiveBack(std::move(*prev));
      }
      joins.Joined();
      prev_from = join->next_begin;
    }
    prev = std::move(piece);
    prev_index = i;
  }
  if (!joins.given_up()) {
    workers->Stop();
    const EventChunks& events = prev_events();
    for (size_t k = prev_from; k < events.size(); ++k) pass.Pass(events[k], prev_marks()[k]);
  }
  // Else from the start of the last piece taken (its events up to prev_from are passed on
  // already; the same decoder from the same byte repeats them first).
  joins.DecodeRest(
      prev_index, prev_from, [&] { workers->Halt(); },
      [&] {
        prev.reset();
        workers.reset();
      });
  if (workers) workers->Stop();  // before the sink ends: a piece being decoded writes to it
  sink.OnEnd();
  return total;
}

Status EtmDecoder::DecodeAgain(const std::vector<uint8_t>& trace, uint64_t begin, uint64_t end,
                               bool last, EventPasser& pass, size_t skip, size_t until,
                               EtmDecodeStats& total) const {
  auto again = Clone();
  if (!again) return tl::unexpected(again.error());
  std::vector<uint8_t> marks;
  pass.Follow(marks, skip, until);
  total.fatal_errors += (*again)->DecodePiece(trace, begin, end, last, pass, marks).fatal_errors;
  return {};
}

}  // namespace ptprof::etm
