// EtmDecoder::DecodeInParts: a CoreSight buffer decoded in pieces on several threads, as
// DecodeParallel does, for a consumer that takes its stream in parts (src/model/parted_sink.h).
// Each piece's events go to a part of the consumer on the thread that decodes it, but for the
// few the joins read (etm_piece_split.h); this thread joins the pieces as DecodeParallel does,
// passes on the events around each join and folds the parts in order. So the consumer's work,
// the larger share of a CoreSight decode, is shared between the threads too. Where two pieces do
// not join, this thread decodes on in one piece over the one that did not (etm_stretch.h) and
// tries the next join from there; after kStretchPieces pieces so, or a decoder error, the
// stretch decodes on to the end (or, without one, the rest is decoded in one piece after what
// was passed on). A part the consumer cannot fold, or whose
// elements the stream would have stamped with an earlier timestamp, is dropped and its piece
// decoded again into the consumer directly. Either way the consumer sees exactly the events of
// the decode in one piece.
#include <memory>
#include <optional>

#include "decoders/etm/etm_decoder.h"
#include "decoders/etm/etm_piece_joins.h"
#include "decoders/etm/etm_piece_split.h"
#include "decoders/etm/etm_piece_workers.h"
#include "decoders/etm/etm_segments.h"
#include "decoders/etm/etm_stretch.h"
#include "decoders/etm/event_passer.h"
#include "decoders/etm/quiet_opencsd_log.h"

namespace ptprof::etm {

namespace {

struct PartedPiece {
  std::unique_ptr<EventSink> part;
  std::unique_ptr<PieceSplit> split;
  EtmDecodeStats stats;
};

// Why `piece`'s part cannot be folded after what `pass` passed on; empty when it can.
std::string RefusalOf(const PartedSink& sink, const EventPasser& pass, const PartedPiece& piece) {
  if (const int id = pass.StampsOneOf(piece.split->tally().unstamped); id >= 0)
    return "an element of trace ID " + HexOffset(static_cast<uint64_t>(id)) +
           " came before the piece's first timestamp of it";
  return sink.Refusal(*piece.part);
}

}  // namespace

EtmDecodeStats EtmDecoder::DecodeInParts(const std::vector<uint8_t>& trace,
                                         const std::vector<EtmSegment>& plan, unsigned jobs,
                                         PartedSink& sink) {
  PieceJoins joins(*this, trace, plan, sink);  // before the pieces, which it outlives
  EtmDecodeStats& total = joins.total();
  EventChunkPool& pool = joins.pool();
  EventPasser& pass = joins.pass();
  // The piece folded last, whose events the next join reads: its tail, or its head when whole.
  // Those events are its decode's numbers base + k, and the stream has them up to `from`.
  // Or, where the last piece did not join, the stretch decoded in one piece over it: its tail,
  // of which the stream has the first `from`.
  std::optional<PartedPiece> held;
  size_t held_index = 0;
  size_t from = 0, base = 0;
  auto held_events = [&]() -> EventChunks& {
    if (OnePieceStretch* stretch = joins.stretch()) return stretch->tail();
    return held->split->whole() ? held->split->head() : held->split->tail();
  };
  auto held_marks = [&]() -> std::vector<uint8_t>& {
    if (OnePieceStretch* stretch = joins.stretch()) return stretch->tail_marks();
    return held->split->whole() ? held->split->head_marks() : held->split->tail_marks();
  };
  // Piece i did not join (a PieceJoins reason, true where the stretch decodes on over it).
  auto stretched = [&](bool over) {
    if (over) {
      held.reset();
      from = joins.stretch()->from();
      base = 0;
    }
    return over;
  };
  std::optional<PieceWorkers<PartedPiece>> workers;
  workers.emplace(
      plan.size(), jobs, [this] { return Clone(); }, [] { return PartedPiece{}; },
      [&](size_t i, EtmDecoder& decoder, PartedPiece& piece) {
        const EtmSegment& s = plan[i];
        const bool last = i + 1 == plan.size();
        piece.part = i ? sink.NewPart() : sink.NewFirstPart();
        piece.split = std::make_unique<PieceSplit>(*piece.part, pool, i ? plan[i - 1].end : 0,
                                                   last ? UINT64_MAX : s.cut);
        piece.stats = decoder.DecodePiece(trace, s.begin, s.end, last, *piece.split,
                                          piece.split->decoder_marks());
        piece.part->OnEnd();  // its share of the stream is complete (PartedSink::NewPart)
      });
  // A stretch goes on from the held piece's decoder and the events the joins kept of it.
  joins.SetHeldDecode([&]() -> std::optional<HeldDecode> {
    std::unique_ptr<EtmDecoder> decoder = held ? workers->Adopt(held_index) : nullptr;
    if (!decoder) return std::nullopt;
    PieceSplit& split = *held->split;
    const bool whole = split.whole();
    return HeldDecode{std::move(decoder), 0, std::move(whole ? split.head() : split.tail()),
                      std::move(whole ? split.head_marks() : split.tail_marks()),
                      whole ? 0 : split.tail_base()};
  });
  if (auto st = workers->Start(); !st) joins.CannotMakeDecoder(0, st.error().message);
  for (size_t i = 0; i < plan.size() && !joins.given_up(); ++i) {
    auto taken = workers->Take(i);
    if (!taken) {
      joins.CannotMakeDecoder(i, taken.error().message);
      break;
    }
    PartedPiece piece = std::move(*taken);
    PieceSplit& split = *piece.split;
    if (piece.stats.fatal_errors) {
      joins.DecoderError(i);
      break;
    }
    // As DecodeParallel: a source that lost synchronisation leaves a state its events do not show
    // (but for the first piece's, which are the decode in one piece's).
    if (const std::optional<uint64_t> lost = split.lost_sync(); lost && i > 0) {
      if (stretched(joins.LostSync(i, *lost, held_index, base + from))) continue;
      break;
    }
    if (i > 0) {
      const EventChunks& prev = held_events();
      const std::vector<uint8_t>& prev_marks = held_marks();
      const TraceIds must_sync = SyncedIn(prev, prev_marks, from, pass.synced());
      std::optional<EtmJoin> join = FindEtmJoin(prev, from, split.head(), split.head_marks(),
                                                plan[i].begin, must_sync);
      // The join read the head only: an event past it at an offset the join could have lined up
      // might have made another line-up.
      if (join && !split.whole() &&
          split.min_offset_past_head() <= prev.OffsetAt(prev.size() - 1))
        join.reset();
      if (!join) {
        if (stretched(joins.Disagree(i, held_index, base + from))) continue;
        break;
      }
      for (size_t k = from; k < join->prev_end; ++k) pass.Pass(prev[k], prev_marks[k]);
      joins.Joined();
      if (split.whole()) {
        held = std::move(piece);
        held_index = i;
        from = join->next_begin;
        base = 0;
        continue;
      }
      for (size_t k = join->next_begin; k < split.head().size(); ++k)
        pass.Pass(split.head()[k], split.head_marks()[k]);
    }
    if (std::string why = RefusalOf(sink, pass, piece); why.empty()) {
      pass.Absorb(split.tally());
      sink.Fold(std::move(piece.part));
      ++total.parts;
    } else {
      // Its events between head and tail, decoded again by a fresh decoder from the same byte.
      piece.part.reset();
      if (total.redone_because.empty()) total.redone_because = why;
      ++total.parts_redone;
      if (auto again = DecodeAgain(trace, plan[i].begin, plan[i].end, i + 1 == plan.size(), pass,
                                   split.head().size(), split.tail_base(), total);
          !again) {
        joins.CannotMakeDecoder(i + 1, again.error().message);
        held = std::move(piece);
        held_index = i;
        from = split.head().size();
        base = 0;
        break;
      }
    }
    base = split.tail_base();
    from = 0;
    held = std::move(piece);
    held_index = i;
  }
  if (!joins.given_up()) {
    workers->Stop();
    const EventChunks& rest = held_events();
    for (size_t k = from; k < rest.size(); ++k) pass.Pass(rest[k], held_marks()[k]);
  }
  // Else from the start of the last piece held (the stream has its decode's first base + from
  // events; the same decoder from the same byte repeats them first).
  joins.DecodeRest(
      held_index, base + from, [&] { workers->Halt(); },
      [&] {
        held.reset();
        workers.reset();
      });
  if (workers) workers->Stop();  // before the sink ends: a piece being decoded writes to it
  sink.OnEnd();
  return total;
}

}  // namespace ptprof::etm
