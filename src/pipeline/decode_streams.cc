#include "src/pipeline/decode_streams.h"

#include <memory>
#include <optional>

#include "src/model/parted_sink.h"

#include "src/pipeline/session_tasks.h"
#include "src/pipeline/stream_merge.h"

namespace ptprof {

namespace {

// The perf time of a TSC: from the tasks' clock, else the trace's (known: there is one).
class NsOfTsc : public BlockClock {
 public:
  NsOfTsc(const SessionTasks* tasks, const std::optional<perf::PerfClock>& clock)
      : tasks_(tasks), clock_(clock) {}
  bool known() const { return tasks_ || clock_; }
  uint64_t TimeOf(uint64_t tsc) const override {
    return tasks_ ? tasks_->TimeOf(tsc) : clock_->TscToPerfTime(tsc);
  }

 private:
  const SessionTasks* tasks_;
  std::optional<perf::PerfClock> clock_;
};

// Between one stream's decoder and the merge: perf time from the TSC, the stream's first gap,
// and the decoder's end of stream kept to itself (the merged output ends once, after all).
class StreamStamp : public EventSink {
 public:
  StreamStamp(EventSink& next, const NsOfTsc& ns, StreamOutcome& outcome)
      : next_(next), outcome_(outcome), ns_(ns) {}

  void OnEvent(const TraceEvent& event) override {
    if (const auto* gap = std::get_if<TraceGap>(&event.body); gap && !outcome_.first_gap) {
      outcome_.first_gap = *gap;
      outcome_.first_gap_offset = event.header.offset;
    }
    if (event.header.tsc == kUnknownTime || event.header.time_ns != kUnknownTime || !ns_.known()) {
      next_.OnEvent(event);
      return;
    }
    // Into an event kept for it: a stream of one kind of event (instructions) then assigns
    // the body in place instead of making and destroying a variant each time.
    stamped_ = event;
    stamped_.header.time_ns = ns_.TimeOf(event.header.tsc);
    next_.OnEvent(stamped_);
  }
  // Blocks go on in their batch, which carries the clock.
  void OnBlocks(const BlockBatch& batch) override {
    if (batch.clock || !ns_.known()) {
      next_.OnBlocks(batch);
      return;
    }
    BlockBatch stamped = batch;
    stamped.clock = &ns_;
    next_.OnBlocks(stamped);
  }
  void OnEnd() override {}

 private:
  EventSink& next_;
  StreamOutcome& outcome_;
  const NsOfTsc& ns_;
  TraceEvent stamped_{EventHeader{}, Instruction{}};
};

// StreamStamp for a consumer that takes its stream in parts (src/model/parted_sink.h), when the
// stream is the only one (nothing to merge): each part of the decode is stamped on its own thread
// into a part of the consumer, and the stream's first gap is the first part's that had one.
class StreamStampInParts : public PartedSink {
 public:
  StreamStampInParts(PartedSink& next, const NsOfTsc& ns, StreamOutcome& outcome)
      : next_(next), ns_(ns), outcome_(outcome), direct_(next, ns, outcome) {}
  void OnEvent(const TraceEvent& event) override { direct_.OnEvent(event); }
  void OnBlocks(const BlockBatch& batch) override { direct_.OnBlocks(batch); }
  void OnEnd() override {}
  std::unique_ptr<EventSink> NewPart() const override {
    return std::make_unique<Part>(next_.NewPart(), ns_);
  }
  std::unique_ptr<EventSink> NewFirstPart() const override {
    return std::make_unique<Part>(next_.NewFirstPart(), ns_);
  }
  std::string Refusal(const EventSink& part) const override {
    return next_.Refusal(*static_cast<const Part&>(part).next);
  }
  bool TakesParts() const override { return next_.TakesParts(); }
  uint64_t PartBytes() const override { return next_.PartBytes(); }
  void Fold(std::unique_ptr<EventSink> part) override {
    auto& stamped = static_cast<Part&>(*part);
    if (!outcome_.first_gap && stamped.outcome.first_gap) {
      outcome_.first_gap = stamped.outcome.first_gap;
      outcome_.first_gap_offset = stamped.outcome.first_gap_offset;
    }
    next_.Fold(std::move(stamped.next));
  }

 private:
  struct Part : StreamStamp {
    Part(std::unique_ptr<EventSink> inner, const NsOfTsc& ns)
        : StreamStamp(*inner, ns, outcome), next(std::move(inner)) {}
    void OnEnd() override { next->OnEnd(); }  // the part's end (PartedSink::NewPart)
    StreamOutcome outcome;
    std::unique_ptr<EventSink> next;
  };
  PartedSink& next_;
  const NsOfTsc& ns_;
  StreamOutcome& outcome_;
  StreamStamp direct_;
};

std::optional<perf::PerfClock> ClockOf(const Session& session) {
  if (session.tasks) return session.tasks->clock;
  if (!session.manifest.clock) return std::nullopt;
  perf::PerfClock clock{session.manifest.clock->time_shift, session.manifest.clock->time_mult,
                        session.manifest.clock->time_zero};
  if (!clock.usable()) return std::nullopt;
  return clock;
}

}  // namespace

std::string DescribeDecode(const pt::FlowSummary& summary) {
  std::string text = "decoded in " + std::to_string(summary.segments) + " PSB segment" +
                     (summary.segments == 1 ? "" : "s");
  if (summary.parts)
    text += " (" + std::to_string(summary.parts) + " consumed in parts on the decoding threads" +
            (summary.parts_redone
                 ? ", " + std::to_string(summary.parts_redone) +
                       " of them again in order, their parts not foldable" +
                       (summary.redone_because.empty() ? std::string()
                                                       : ": the first because " + summary.redone_because)
                 : std::string()) +
            ")";
  if (!summary.sequential_because.empty())
    text += "; sequential because " + summary.sequential_because;
  return text;
}

std::vector<StreamOutcome> DecodeStreams(const Session& session, const std::vector<size_t>& selected,
                                         const DecodeStreamsOptions& options, EventSink& out) {
  static const ImageSet kNoImages;
  std::vector<StreamOutcome> outcomes(selected.size());
  const std::optional<perf::PerfClock> clock = ClockOf(session);
  std::vector<StreamProducer> producers;
  for (size_t i = 0; i < selected.size(); ++i) {
    outcomes[i].stream = selected[i];
    producers.push_back([&, i](EventSink& sink) {
      StreamOutcome& outcome = outcomes[i];
      const archive::StreamEntry& stream = session.manifest.streams[outcome.stream];
      const bool named = stream.name != "raw";
      pt::FlowRequest request;
      request.params = session.params();
      request.insns = options.insns;
      request.ticks = options.ticks;
      request.mark_runs = options.mark_runs;
      if (options.graphs) request.graphs = options.graphs(outcome.stream);
      // A raw trace is CPU 0 by convention; a per-thread stream has no CPU.
      request.cpu = named ? stream.cpu : (stream.cpu != kUnknownId ? stream.cpu : 0);
      request.pid = stream.pid;
      request.tid = stream.tid;
      std::unique_ptr<pt::TaskTimeline> tasks;
      if (session.tasks) {
        std::optional<uint32_t> cpu;
        std::optional<int32_t> tid;
        if (stream.cpu != kUnknownId) cpu = static_cast<uint32_t>(stream.cpu);
        if (stream.tid != kUnknownId) tid = stream.tid;
        tasks = session.tasks->ForStream(session.images, cpu, tid);
        request.tasks = tasks.get();
      }
      const NsOfTsc ns(session.tasks.get(), clock);
      // A consumer that takes its stream in parts gets them when nothing is to be merged.
      auto* parted = selected.size() == 1 ? dynamic_cast<PartedSink*>(&sink) : nullptr;
      if (parted && !parted->TakesParts()) parted = nullptr;
      std::optional<StreamStamp> stamp;
      std::optional<StreamStampInParts> stamp_in_parts;
      EventSink* stamped;
      if (parted)
        stamped = &stamp_in_parts.emplace(*parted, ns, outcome);
      else
        stamped = &stamp.emplace(sink, ns, outcome);
      auto summary = pt::DecodeFlow(session.stream_bytes[outcome.stream],
                                    request.tasks ? kNoImages : session.images, request, *stamped);
      if (summary) {
        outcome.summary = std::move(*summary);
      } else {
        outcome.error = summary.error().message;
      }
    });
  }
  MergeStreams(producers, out);
  return outcomes;
}

}  // namespace ptprof
