#pragma once
// OnePieceStretch: where a piece of a CoreSight decode in pieces (etm_parallel_decode.cc,
// etm_parted_decode.cc) does not join the one before it, the stitching thread decodes on in one
// piece, as the decode in one piece does, from the first byte of the last piece held over the
// piece that did not join and into the next one, and the next join is tried from there. So
// damage near one cut costs the pieces around it, not the parallel decode of the rest.
//
// Its decoder starts fresh at the held piece's first byte, so its first events are the held
// piece's (the stream has `skip` of them already); or it is the decoder that decoded the held
// piece on a worker, adopted with the events the joins kept of that piece (HeldDecode), so that
// the held piece is not decoded twice. Each Extend feeds it on to the end of one more
// piece: its events are passed on up to the first at or past that piece's cut, and from there on
// kept as its tail, which the next join reads as it reads a piece's tail.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "decoders/etm/etm_decoder.h"
#include "decoders/etm/event_passer.h"
#include "src/model/event_chunks.h"

namespace ptprof::etm {

// How many pieces a stretch spans (the held one and those it goes over) before the rest of the
// buffer is decoded in one piece: where joins keep failing (a buffer damaged all along, or a
// source quiet for longer than the overlap), the pieces decoded ahead are wasted work.
inline constexpr size_t kStretchPieces = 3;

// The held piece's decode as a worker left it, for a stretch to go on from: its decoder, fed from
// the piece's first byte up to `fed` (its end: PieceJoins fills it in), and its events from
// number `base` on (with their marks), as many as the joins keep (a piece's whole events, or its
// tail).
struct HeldDecode {
  std::unique_ptr<EtmDecoder> decoder;
  uint64_t fed = 0;
  EventChunks events;
  std::vector<uint8_t> marks;
  size_t base = 0;
};

class OnePieceStretch : public EventSink {
 public:
  OnePieceStretch(std::unique_ptr<EtmDecoder> decoder, EventPasser& pass, EventChunkPool& pool,
                  uint64_t begin, size_t skip);
  // Goes on from `held`, the decode of the piece that begins at `begin`, instead of decoding it
  // again: its events are the tail that the first Extend passes on or keeps.
  OnePieceStretch(HeldDecode held, EventPasser& pass, EventChunkPool& pool, uint64_t begin,
                  size_t skip);

  // Passes on what the tail held and the events of its decode on to byte `end` (the end of the
  // trace after it when `last`) up to the first at or past `cut` (UINT64_MAX: all of them), and
  // keeps that one and the rest as the tail. False when the decoder met an error: the events
  // before it are passed on, none after (the pieces decoded alone met none, and the message
  // OpenCSD gives while several decoders run is not the one the decode in one piece reports); the
  // caller then decodes the rest in one piece from begin(), the first passed() events skipped.
  bool Extend(const std::vector<uint8_t>& trace, uint64_t end, uint64_t cut, bool last);

  // Decodes on to the end of the trace and passes on every event: the rest of the decode in one
  // piece, where the joins are given up. False as Extend.
  bool Finish(const std::vector<uint8_t>& trace) {
    return Extend(trace, trace.size(), UINT64_MAX, true);
  }

  uint64_t begin() const { return begin_; }
  // How many of its decode's first events the stream has.
  size_t passed() const { return passed_; }
  // Its events from the first at or past the last cut on, and how many of them the stream has.
  EventChunks& tail() { return tail_; }
  std::vector<uint8_t>& tail_marks() { return tail_marks_; }
  size_t from() const { return passed_ > tail_base_ ? passed_ - tail_base_ : 0; }
  // Pieces it spans: the held one and each it was extended over.
  size_t pieces() const { return extends_ + 1; }

  void OnEvent(const TraceEvent& event) override;  // its decoder's events

 private:
  void Route(const TraceEvent& event, uint8_t mark, size_t number);

  std::unique_ptr<EtmDecoder> decoder_;
  EventPasser& pass_;
  EventChunkPool& pool_;
  uint64_t begin_;
  uint64_t fed_;          // the decoder has been fed up to here
  bool failed_ = false;   // its decoder met an error
  size_t extends_ = 0;
  std::vector<uint8_t> marks_;  // the decoder's, emptied as each event is taken
  size_t seen_ = 0;             // events decoded
  EventChunks tail_;
  std::vector<uint8_t> tail_marks_;
  size_t tail_base_ = 0;  // tail_[0] is event number tail_base_
  bool in_tail_ = false;
  uint64_t cut_ = 0;
  size_t passed_;
};

}  // namespace ptprof::etm
