#pragma once
// PartPipe takes a stream that one thread decodes in one piece and has a second thread consume
// it: the events it gets are gathered into parts of a consumer that takes its stream in parts
// (parted_sink.h), each part made and fed on the pipe's own thread while the decoding thread goes
// on, and folded into the consumer in stream order on the decoding thread. A parallel decode
// that must decode a stretch in one piece (a CoreSight buffer whose pieces do not join) so still
// shares the work between two threads: the decoder on one, the consumer (a writer's formatting, a
// profiler) on the other.
//
// The consumer sees the stream it would have seen directly: a part it refuses (Refusal) is
// dropped and its events, still held, are passed to it directly instead, and from then on every
// event goes to it directly. Without its thread (the system refused it, or the consumer takes no
// parts now) the pipe passes every event on directly.
//
// Handing an event over costs a copy on the decoding thread and a read on the other, which only
// pays where the consumer does more with it (a writer's formatting; not a profiler that finds
// nothing to do with gaps). The first kProbeParts parts measure it: where the thread fed them in
// less than kLightShare of the time the decoding thread took to make them, the consumer is light,
// and once they are folded every event goes to it directly.
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "src/model/event_chunks.h"
#include "src/model/parted_sink.h"

namespace ptprof {

class PartPipe : public EventSink {
 public:
  // Parts of `part_events` events, at most `in_flight` of them given to the thread and not yet
  // folded (the decoding thread waits for the oldest beyond that).
  static constexpr size_t kPartEvents = 1 << 14;
  static constexpr size_t kInFlight = 3;
  static constexpr size_t kProbeParts = 4;
  static constexpr double kLightShare = 0.15;

  explicit PartPipe(PartedSink& sink, size_t part_events = kPartEvents,
                    size_t in_flight = kInFlight);
  // Stops the thread; parts not folded are dropped (Drain was not reached: the decode threw).
  ~PartPipe();
  PartPipe(const PartPipe&) = delete;
  PartPipe& operator=(const PartPipe&) = delete;

  // Starts the thread; false (every event then goes to the consumer directly) when the consumer
  // takes no parts now or the system refuses the thread.
  bool Start();

  void OnEvent(const TraceEvent& event) override;
  // The consumer's OnEnd is not called: the decode that feeds the pipe may go on feeding it
  // directly after Drain.
  void OnEnd() override {}

  // Folds every part, waiting for the thread: the consumer then has every event given so far.
  // Throws what a part's feeding threw (out of memory) on the thread.
  void Drain();

  size_t parts_folded() const { return folded_; }
  size_t parts_refused() const { return refused_; }
  // The consumer was found light, and took the events after the probe directly.
  bool found_light() const { return light_; }

 private:
  struct Part {
    EventChunks events;
    std::unique_ptr<EventSink> sink;  // made and fed on the thread
    bool done = false;
    std::exception_ptr failure;  // what feeding it threw
    int64_t feed_ns = 0;         // the thread's time to feed it
    explicit Part(EventChunkPool* pool) : events(pool) {}
  };

  // The part being gathered, to the thread; then folds the parts it has done, waiting for the
  // oldest while more than in_flight_ are out.
  void Submit();
  // The oldest part given to the thread once it is done (waiting for it when `wait`), else null.
  std::unique_ptr<Part> TakeOldest(bool wait);
  // Folds the oldest part (see TakeOldest); false when there was none to fold. A refused part
  // sends it and everything after it to the consumer directly.
  bool FoldOldest(bool wait);
  void PassDirectly(Part& part);  // its events to the consumer, its part dropped
  // After the probe: when the consumer is light, folds the parts out and goes direct.
  void JudgeProbe();
  void Work();

  PartedSink& sink_;
  const size_t part_events_, in_flight_;
  EventChunkPool pool_;
  std::unique_ptr<Part> gathering_;
  bool direct_ = true;  // events go to the consumer directly
  std::mutex mutex_;
  std::condition_variable wake_, done_;
  std::deque<std::unique_ptr<Part>> parts_;  // given to the thread, oldest first
  size_t next_ = 0;                          // parts_[next_] is the next the thread takes
  bool stop_ = false;
  std::vector<std::thread> thread_;
  size_t folded_ = 0, refused_ = 0;
  // The probe: the decoding thread's time gathering the parts submitted (from each one's first
  // event to its submission), and the thread's time feeding the parts folded.
  int64_t gather_begin_ns_ = 0, made_ns_ = 0, fed_ns_ = 0;
  bool judged_ = false, light_ = false;
};

}  // namespace ptprof
