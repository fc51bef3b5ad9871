#pragma once
// PartedSink is a consumer that can take its stream in parts: each part is consumed by a sink of
// its own (NewPart), on any thread, knowing nothing of what came before it, and the parts are then
// folded into this sink in stream order (Fold). Between folds this sink may also get events
// directly (OnEvent, OnBlocks): the stream is what it got directly and the folded parts' events,
// in the order they came. A parallel decode (decoders/pt/parted_flow.h) gives each thread's
// segments a part of their own, so the consumer's work is shared between the threads instead of
// falling on the one that stitches the segments together.
//
// The result after OnEnd must be the same however the stream was cut into parts: a sink whose
// state at some event depends on earlier events (an open interval, a call stack) keeps what its
// part could not resolve alone and resolves it in Fold. A part may also guess what came before it
// and keep what it guessed; Fold then checks the guess (Refusal), and a part guessed wrong is
// dropped and its stretch of the stream passed to this sink directly instead, decoded again.
#include <cstdint>
#include <memory>
#include <string>

#include "src/model/event_sink.h"

namespace ptprof {

class PartedSink : public EventSink {
 public:
  // A fresh, empty sink for one part of the stream, made on the thread that will feed it. It gets
  // OnEvent and OnBlocks, then OnEnd when its share of the stream is complete (on that thread; a
  // part may give back there what it borrowed for the work, such as a thread's cache), then it is
  // folded or dropped. It may be fed while other parts are and while this sink takes events or
  // folds, so it must not share mutable state with them unguarded.
  virtual std::unique_ptr<EventSink> NewPart() const = 0;
  // NewPart for the first stretch of a decode: nothing of the decode comes before it (events this
  // sink took before the decode began may).
  virtual std::unique_ptr<EventSink> NewFirstPart() const { return NewPart(); }
  // Why Fold cannot take `part` (made by NewPart or NewFirstPart, ended) now, after everything
  // this sink has taken so far; empty when it can. When it cannot, the decoder drops the part
  // and passes the events it had to this sink directly, in its place.
  virtual std::string Refusal(const EventSink& /*part*/) const { return {}; }
  bool CanFold(const EventSink& part) const { return Refusal(part).empty(); }
  // Whether this sink takes its stream in parts at all just now (a sink whose helpers cannot
  // says no, and then gets one stream).
  virtual bool TakesParts() const { return true; }
  // Takes `part` (made by NewPart), whose events follow everything this sink has taken so far.
  virtual void Fold(std::unique_ptr<EventSink> part) = 0;
  // The bytes of trace a part should cover when the user did not say (0: the decoder's choice).
  // A sink whose parts hold what they make until they are folded (a writer's text) asks for
  // short ones, so that the parts waiting stay small.
  virtual uint64_t PartBytes() const { return 0; }
};

}  // namespace ptprof
