// EtmDecoder::DecodeParallel: a CoreSight buffer decoded in pieces on several threads and
// stitched where neighbouring decodes agree (etm_segments.h), so that the sink sees exactly the
// events of the decode in one piece. Pieces are decoded a wave of `jobs` at a time, each by a
// fresh decode tree made on this thread; what a wave holds is its pieces' events and the last
// piece of the wave before. Where two pieces do not join, or a piece meets a decoder error, the
// rest is decoded in one piece from the start of the last piece that joined, whose events it
// repeats first (they are skipped).
#include <cinttypes>
#include <cstdio>
#include <optional>
#include <thread>

#include <opencsd/c_api/opencsd_c_api.h>

#include "decoders/etm/etm_decoder.h"
#include "decoders/etm/etm_segments.h"

namespace ptprof::etm {

namespace {

struct Piece {
  std::vector<TraceEvent> events;
  std::vector<uint8_t> marks;  // per event: 0x80 | trace ID for an element (see DecodePiece)
  EtmDecodeStats stats;
};

class Collect : public EventSink {
 public:
  explicit Collect(std::vector<TraceEvent>& out) : out_(out) {}
  void OnEvent(const TraceEvent& event) override { out_.push_back(event); }

 private:
  std::vector<TraceEvent>& out_;
};

// OpenCSD keeps its last error in one process-wide logger that every decode tree writes: while
// several trees decode at once it must not store errors (a decoder error sends the decode back
// to one piece anyway, where the message is read).
class QuietOpenCsdLog {
 public:
  QuietOpenCsdLog() { ocsd_def_errlog_init(OCSD_ERR_SEV_NONE, 0); }
  ~QuietOpenCsdLog() { Restore(); }
  void Restore() {
    if (restored_) return;
    ocsd_def_errlog_init(OCSD_ERR_SEV_ERROR, 0);  // OpenCSD's own default
    restored_ = true;
  }

 private:
  bool restored_ = false;
};

std::string Hex(uint64_t value) {
  char text[24];
  std::snprintf(text, sizeof text, "%#" PRIx64, value);
  return text;
}

// Passes events on to the sink after skipping the first `skip`, counting what it passes. A
// piece's decode stamps an element with the last timestamp of its trace ID that it met itself;
// before its first one it has none, where the decode in one piece has the last one before the
// piece: the passer keeps those and stamps such elements with them.
class Passer : public EventSink {
 public:
  explicit Passer(EventSink& sink, EtmDecodeStats& total) : sink_(sink), total_(total) {}
  // From now on OnEvent takes events of a decode whose marks are `marks`, the first `skip` not.
  void Follow(const std::vector<uint8_t>& marks, size_t skip) {
    marks_ = &marks;
    skip_ = skip;
    seen_ = 0;
  }
  void OnEvent(const TraceEvent& event) override {
    if (seen_++ < skip_) return;
    Pass(event, marks_ && !marks_->empty() ? marks_->back() : 0);
  }
  void Pass(const TraceEvent& event, uint8_t mark) {
    if (mark & 0x80) {
      ++total_.elements;
      const uint8_t id = mark & 0x7f;
      const auto* marker = std::get_if<Marker>(&event.body);
      if (marker && marker->kind == Marker::Kind::kTimestamp) {
        timestamp_of_id_[id] = marker->value;
      } else if (event.header.tsc == kUnknownTime && timestamp_of_id_[id]) {
        TraceEvent stamped = event;
        stamped.header.tsc = *timestamp_of_id_[id];
        Count(stamped);
        return;
      }
    }
    Count(event);
  }
  void Count(const TraceEvent& event) {
    if (const auto* b = std::get_if<ExecBlock>(&event.body)) {
      ++total_.ranges;
      total_.instructions += b->insns;
    } else if (std::holds_alternative<TraceGap>(event.body)) {
      ++total_.gaps;
    }
    sink_.OnEvent(event);
  }

 private:
  EventSink& sink_;
  EtmDecodeStats& total_;
  const std::vector<uint8_t>* marks_ = nullptr;
  size_t skip_ = 0;
  size_t seen_ = 0;
  std::optional<uint64_t> timestamp_of_id_[128];
};

}  // namespace

std::string HowDecoded(const EtmDecodeStats& stats) {
  if (stats.segments < 2) return "decoded in one piece";
  std::string text = "decoded in " + std::to_string(stats.segments) + " segments, " +
                     std::to_string(stats.joined) + " joined";
  if (!stats.sequential_because.empty())
    text += "; the rest in one piece because " + stats.sequential_because;
  return text;
}

EtmDecodeStats EtmDecoder::DecodeParallel(const std::vector<uint8_t>& trace,
                                          const std::vector<EtmSegment>& plan, unsigned jobs,
                                          EventSink& sink) {
  EtmDecodeStats total;
  total.bytes = trace.size();
  total.segments = plan.size();
  Passer pass(sink, total);
  QuietOpenCsdLog quiet;
  std::optional<Piece> prev;
  size_t prev_from = 0;
  size_t fallback = plan.size();  // the first piece that did not join
  for (size_t wave = 0; wave < plan.size() && fallback == plan.size(); wave += jobs) {
    const size_t n = std::min<size_t>(jobs, plan.size() - wave);
    std::vector<std::unique_ptr<EtmDecoder>> decoders;
    for (size_t t = 0; t < n; ++t) {
      auto clone = Clone();
      if (!clone) {
        total.sequential_because = "cannot make another decoder: " + clone.error().message;
        fallback = wave;
        break;
      }
      decoders.push_back(std::move(*clone));
    }
    if (fallback != plan.size()) break;
    std::vector<Piece> pieces(n);
    auto decode = [&](size_t t) {
      const EtmSegment& s = plan[wave + t];
      Collect into(pieces[t].events);
      pieces[t].stats = decoders[t]->DecodePiece(trace, s.begin, s.end,
                                                 wave + t + 1 == plan.size(), into,
                                                 pieces[t].marks);
    };
    std::vector<std::thread> threads;
    for (size_t t = 1; t < n; ++t) threads.emplace_back(decode, t);
    decode(0);
    for (std::thread& thread : threads) thread.join();
    decoders.clear();
    for (size_t t = 0; t < n; ++t) {
      const size_t i = wave + t;
      Piece& piece = pieces[t];
      if (piece.stats.fatal_errors) {
        total.sequential_because = "a decoder error in the segment at offset " + Hex(plan[i].begin);
        fallback = i;
        break;
      }
      if (i == 0) {
        prev = std::move(piece);
        prev_from = 0;
        continue;
      }
      const std::optional<EtmJoin> join = FindEtmJoin(prev->events, prev_from, piece.events,
                                                      plan[i].begin);
      if (!join) {
        total.sequential_because =
            "the segments at offsets " + Hex(plan[i - 1].begin) + " and " + Hex(plan[i].begin) +
            " do not agree where they overlap";
        fallback = i;
        break;
      }
      for (size_t k = prev_from; k < join->prev_end; ++k)
        pass.Pass(prev->events[k], prev->marks[k]);
      prev = std::move(piece);
      prev_from = join->next_begin;
      ++total.joined;
    }
  }
  if (fallback == plan.size()) {
    for (size_t k = prev_from; k < prev->events.size(); ++k)
      pass.Pass(prev->events[k], prev->marks[k]);
  } else {
    // From the start of the last piece taken (its events up to prev_from are passed on already;
    // the same decoder from the same byte repeats them first), or from the start.
    quiet.Restore();
    const uint64_t from = fallback == 0 ? 0 : plan[fallback - 1].begin;
    const size_t skip = fallback == 0 ? 0 : prev_from;
    prev.reset();
    auto rest = Clone();
    if (!rest) {
      total.sequential_because += "; cannot make another decoder: " + rest.error().message;
    } else {
      std::vector<uint8_t> marks;
      pass.Follow(marks, skip);
      Passer& tail = pass;
      const EtmDecodeStats stats =
          (*rest)->DecodePiece(trace, from, trace.size(), true, tail, marks);
      total.fatal_errors += stats.fatal_errors;
    }
  }
  sink.OnEnd();
  return total;
}

}  // namespace ptprof::etm
