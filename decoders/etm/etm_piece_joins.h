#pragma once
// PieceJoins: what the two decodes of a CoreSight buffer in pieces (EtmDecoder::DecodeParallel,
// DecodeInParts) share around their joins. Where a piece does not join the one held before it,
// a stretch decodes on in one piece over it (etm_stretch.h). After kStretchPieces pieces so, or
// where a piece cannot be taken or meets a decoder error, the joins are given up there, with the
// reason --verbose gives. At the end, where they were given up, the rest of the buffer is
// decoded in one piece: by the stretch, on to the end, or else by a fresh decoder from the start
// of the piece held, whose first events the stream has already. It also holds what both decodes
// keep for the whole buffer: the counts, the pool of event chunks (made before the pieces and
// destroyed after them, as their events give their chunks back to it), the passer that hands the
// events on to the sink, and OpenCSD's error log kept quiet while several decoders run.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "decoders/etm/etm_decoder.h"
#include "decoders/etm/etm_segments.h"
#include "decoders/etm/etm_stretch.h"
#include "decoders/etm/event_passer.h"
#include "decoders/etm/quiet_opencsd_log.h"
#include "src/model/event_chunks.h"
#include "src/model/parted_sink.h"

namespace ptprof::etm {

class PieceJoins {
 public:
  // A decode of `trace` by clones of `decoder` in the pieces of `plan`, its events for `sink`.
  PieceJoins(const EtmDecoder& decoder, const std::vector<uint8_t>& trace,
             const std::vector<EtmSegment>& plan, EventSink& sink)
      : decoder_(decoder), trace_(trace), plan_(plan), pass_(sink, total_), sink_(sink),
        consumer_(dynamic_cast<PartedSink*>(&sink)), given_up_at_(plan.size()) {
    total_.bytes = trace.size();
    total_.segments = plan.size();
  }

  EtmDecodeStats& total() { return total_; }
  EventChunkPool& pool() { return pool_; }
  EventPasser& pass() { return pass_; }

  // How a new stretch gets the decode of the piece held as a worker left it, to go on from
  // (HeldDecode, its `fed` filled in here); without it, or where it gives none, the stretch
  // decodes that piece again.
  void SetHeldDecode(std::function<std::optional<HeldDecode>()> held_decode) {
    held_decode_ = std::move(held_decode);
  }

  // The joins are given up at piece i, for `why`.
  void GiveUp(size_t i, std::string why);
  // Piece i did not join, for `why`, the piece held (plan[held], of whose events the stream has
  // `skip`). True where the stretch (begun at plan[held] when there is none) decodes on over it
  // and is counted; else the joins are given up at i: the stretch has gone over kStretchPieces
  // already, no decoder can be made, or it meets a decoder error.
  bool StretchOver(size_t i, const std::string& why, size_t held, size_t skip);
  // The reasons the two decodes meet alike: no decoder could be made for piece i (or for the
  // first pieces, at Start), piece i met a decoder error, a source lost synchronisation in piece
  // i (at `offset`), or piece i's events do not agree with the held piece's where they overlap.
  void CannotMakeDecoder(size_t i, const std::string& message) {
    GiveUp(i, "cannot make another decoder: " + message);
  }
  void DecoderError(size_t i) {
    GiveUp(i, "a decoder error in the segment at offset " + HexOffset(plan_[i].begin));
  }
  bool LostSync(size_t i, uint64_t offset, size_t held, size_t skip) {
    return StretchOver(i, "a source lost synchronisation at offset " + HexOffset(offset), held,
                       skip);
  }
  bool Disagree(size_t i, size_t held, size_t skip) {
    return StretchOver(i,
                       "the segments at offsets " + HexOffset(plan_[i - 1].begin) + " and " +
                           HexOffset(plan_[i].begin) + " do not agree where they overlap",
                       held, skip);
  }
  // Piece i joined the piece (or the stretch) before it.
  void Joined() {
    stretch_.reset();
    ++total_.joined;
  }

  bool given_up() const { return given_up_at_ < plan_.size(); }
  // The stretch under way, or null: its tail is what the next join reads.
  OnePieceStretch* stretch() { return stretch_ ? &*stretch_ : nullptr; }

  // Where the joins were given up, the rest of the buffer after what the stream has. The stretch
  // decodes on to the end; without one, or where its decoder meets an error, a fresh decoder
  // decodes from the start of plan[held], the piece held, and its first `skip` events are
  // skipped (from the buffer's start, none skipped, where the first piece was not taken).
  // `halt` tells the workers to start no more pieces; `let_go` waits for them and frees the
  // pieces held, before OpenCSD's error log is restored for the decode in one piece.
  void DecodeRest(size_t held, size_t skip, const std::function<void()>& halt,
                  const std::function<void()>& let_go);

 private:
  void DecodeRestInOnePiece(size_t held, size_t skip, const std::function<void()>& let_go);

  const EtmDecoder& decoder_;
  const std::vector<uint8_t>& trace_;
  const std::vector<EtmSegment>& plan_;
  EtmDecodeStats total_;
  EventChunkPool pool_{SIZE_MAX};
  EventPasser pass_;
  EventSink& sink_;
  // `sink_` when it takes its stream in parts: where the rest is decoded in one piece, a second
  // thread consumes it in parts (src/model/part_pipe.h) while this one decodes.
  PartedSink* consumer_;
  QuietOpenCsdLog quiet_;
  std::optional<OnePieceStretch> stretch_;
  std::function<std::optional<HeldDecode>()> held_decode_;
  size_t given_up_at_;
};

}  // namespace ptprof::etm
