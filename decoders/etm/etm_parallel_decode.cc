// EtmDecoder::DecodeParallel: a CoreSight buffer decoded in pieces on several threads and
// stitched where neighbouring decodes agree (etm_segments.h), so that the sink sees exactly the
// events of the decode in one piece. Where two pieces do not join, or a piece meets a decoder
// error, the rest is decoded in one piece from the start of the last piece that joined, whose events it
// repeats first (they are skipped). `jobs` threads decode pieces ahead (at most jobs + 1) while
// this thread stitches and passes events on.
#include <cinttypes>
#include <condition_variable>
#include <cstdio>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>

#include <opencsd/c_api/opencsd_c_api.h>

#include "decoders/etm/element_events.h"
#include "decoders/etm/etm_decoder.h"
#include "decoders/etm/etm_segments.h"

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
  // The trace IDs with an element other than "no sync" passed on so far.
  const TraceIds& synced() const { return synced_; }

  void Pass(const TraceEvent& event, uint8_t mark) {
    if (mark & 0x80) {
      ++total_.elements;
      const uint8_t id = mark & 0x7f;
      if (!IsNoSync(event)) synced_.set(id);
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
  TraceIds synced_;
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
  if (!stats.sequential_because.empty())
    text += "; the rest in one piece because " + stats.sequential_because;
  return text;
}

// Decodes the pieces of a plan on `jobs` threads, in order and at most `jobs` + 1 pieces ahead of
// the one the stitching thread waits for, each piece by a fresh decoder: OpenCSD keeps its decode
// trees in process-wide lists, so they are made and destroyed on the stitching thread (in Take)
// and handed to the threads. Recycles the memory of pieces given back.
class PieceWorkers {
 public:
  using Make = std::function<Result<std::unique_ptr<EtmDecoder>>()>;
  PieceWorkers(const std::vector<uint8_t>& trace, const std::vector<EtmSegment>& plan,
               unsigned jobs, Make make, EventChunkPool& pool)
      : trace_(trace), plan_(plan), jobs_(jobs), make_(std::move(make)), pool_(pool),
        done_(plan.size()) {}
  ~PieceWorkers() { Stop(); }

  // Makes the first decoders and starts the threads; an error when a decoder cannot be made.
  Status Start() {
    if (auto st = TopUp(); !st) return st;
    for (unsigned t = 0; t < jobs_; ++t) threads_.emplace_back([this] { Work(); });
    return {};
  }

  // Piece `i`, once decoded (waits for it); an error when a decoder cannot be made.
  Result<Piece> Take(size_t i) {
    if (auto st = TopUp(); !st) return tl::unexpected(st.error());
    std::unique_lock<std::mutex> lock(mutex_);
    wanted_ = i;
    wake_.notify_all();
    ready_.wait(lock, [&] { return done_[i].has_value(); });
    Piece piece = std::move(*done_[i]);
    done_[i].reset();
    return piece;
  }
  void GiveBack(Piece piece) {
    piece.events.Clear();  // its chunks go back to the pool
    piece.marks.clear();
    std::lock_guard<std::mutex> lock(mutex_);
    free_.push_back(std::move(piece));
  }
  // Lets the threads finish the piece they decode and waits for them.
  void Stop() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    wake_.notify_all();
    for (std::thread& thread : threads_) thread.join();
    threads_.clear();
  }

 private:
  // Destroys the decoders used and makes fresh ones, enough for every piece the threads may
  // start before the next Take.
  Status TopUp() {
    std::vector<std::unique_ptr<EtmDecoder>> used;
    size_t have = 0;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      used.swap(used_);
      have = fresh_.size();
    }
    used.clear();
    std::vector<std::unique_ptr<EtmDecoder>> made;
    for (; have + made.size() < jobs_ + 1u; ) {
      auto decoder = make_();
      if (!decoder) return tl::unexpected(decoder.error());
      made.push_back(std::move(*decoder));
    }
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto& decoder : made) fresh_.push_back(std::move(decoder));
    wake_.notify_all();
    return {};
  }

  void Work() {
    for (;;) {
      size_t i = 0;
      Piece piece{EventChunks(&pool_), {}, {}};
      std::unique_ptr<EtmDecoder> decoder;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        wake_.wait(lock, [&] {
          return stop_ || next_ >= plan_.size() ||
                 (next_ <= wanted_ + jobs_ && !fresh_.empty());
        });
        if (stop_ || next_ >= plan_.size()) return;
        i = next_++;
        decoder = std::move(fresh_.back());
        fresh_.pop_back();
        if (!free_.empty()) {
          piece = std::move(free_.back());
          free_.pop_back();
        }
      }
      const EtmSegment& s = plan_[i];
      Collect into(piece.events);
      piece.stats = decoder->DecodePiece(trace_, s.begin, s.end, i + 1 == plan_.size(), into,
                                         piece.marks);
      {
        std::lock_guard<std::mutex> lock(mutex_);
        done_[i] = std::move(piece);
        used_.push_back(std::move(decoder));
      }
      ready_.notify_all();
    }
  }

  const std::vector<uint8_t>& trace_;
  const std::vector<EtmSegment>& plan_;
  const unsigned jobs_;
  Make make_;
  EventChunkPool& pool_;
  std::mutex mutex_;
  std::condition_variable wake_, ready_;
  std::vector<std::optional<Piece>> done_;
  std::vector<Piece> free_;
  std::vector<std::unique_ptr<EtmDecoder>> fresh_, used_;
  size_t next_ = 0, wanted_ = 0;
  bool stop_ = false;
  std::vector<std::thread> threads_;
};

EtmDecodeStats EtmDecoder::DecodeParallel(const std::vector<uint8_t>& trace,
                                          const std::vector<EtmSegment>& plan, unsigned jobs,
                                          EventSink& sink) {
  EtmDecodeStats total;
  total.bytes = trace.size();
  total.segments = plan.size();
  // Declared before the pieces, destroyed after them: their events give their chunks back to it.
  EventChunkPool pool(SIZE_MAX);
  Passer pass(sink, total);
  QuietOpenCsdLog quiet;
  std::optional<Piece> prev;
  size_t prev_from = 0;
  size_t fallback = plan.size();  // the first piece that did not join
  std::optional<PieceWorkers> workers;
  workers.emplace(trace, plan, jobs, [this] { return Clone(); }, pool);
  if (auto st = workers->Start(); !st) {
    total.sequential_because = "cannot make another decoder: " + st.error().message;
    fallback = 0;
  }
  for (size_t i = 0; i < plan.size() && fallback == plan.size(); ++i) {
    auto taken = workers->Take(i);
    if (!taken) {
      total.sequential_because = "cannot make another decoder: " + taken.error().message;
      fallback = i;
      break;
    }
    Piece piece = std::move(*taken);
    if (piece.stats.fatal_errors) {
      total.sequential_because = "a decoder error in the segment at offset " + Hex(plan[i].begin);
      fallback = i;
      break;
    }
    // A source that loses synchronisation mid-stream (a bad packet: damaged trace) leaves its
    // decoder in a state the events do not show, which a fresh decoder need not share. Each
    // piece is looked at once, as it comes.
    if (const std::optional<uint64_t> lost = LostSync(piece.events)) {
      total.sequential_because = "a source lost synchronisation at offset " + Hex(*lost);
      fallback = i;
      break;
    }
    if (i > 0) {
      // Every source synchronised in the stream so far or in what prev passes on must be
      // synchronised in the next decode by where they join.
      TraceIds must_sync = pass.synced();
      for (size_t k = prev_from; k < prev->events.size(); ++k)
        if ((prev->marks[k] & 0x80) && !IsNoSync(prev->events[k]))
          must_sync.set(prev->marks[k] & 0x7f);
      const std::optional<EtmJoin> join = FindEtmJoin(prev->events, prev_from, piece.events,
                                                      piece.marks, plan[i].begin, must_sync);
      if (!join) {
        total.sequential_because =
            "the segments at offsets " + Hex(plan[i - 1].begin) + " and " + Hex(plan[i].begin) +
            " do not agree where they overlap";
        fallback = i;
        break;
      }
      for (size_t k = prev_from; k < join->prev_end; ++k)
        pass.Pass(prev->events[k], prev->marks[k]);
      workers->GiveBack(std::move(*prev));
      prev_from = join->next_begin;
      ++total.joined;
    }
    prev = std::move(piece);
  }
  workers->Stop();
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
    workers.reset();
    auto rest = Clone();
    if (!rest) {
      total.sequential_because += "; cannot make another decoder: " + rest.error().message;
    } else {
      std::vector<uint8_t> marks;
      pass.Follow(marks, skip);
      const EtmDecodeStats stats = (*rest)->DecodePiece(trace, from, trace.size(), true, pass, marks);
      total.fatal_errors += stats.fatal_errors;
    }
  }
  sink.OnEnd();
  return total;
}

}  // namespace ptprof::etm
