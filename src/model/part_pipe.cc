#include "src/model/part_pipe.h"

#include <chrono>
#include <utility>

#include "src/model/worker_threads.h"

namespace ptprof {

namespace {

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

PartPipe::PartPipe(PartedSink& sink, size_t part_events, size_t in_flight)
    : sink_(sink), part_events_(part_events ? part_events : 1), in_flight_(in_flight ? in_flight : 1) {}

PartPipe::~PartPipe() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  for (std::thread& thread : thread_) thread.join();
}

bool PartPipe::Start() {
  if (!thread_.empty() || !sink_.TakesParts()) return !direct_;
  if (StartThreads(thread_, 1, [this](unsigned) { Work(); }).count == 0) return false;
  gathering_ = std::make_unique<Part>(&pool_);
  direct_ = false;
  return true;
}

void PartPipe::OnEvent(const TraceEvent& event) {
  if (direct_) {
    sink_.OnEvent(event);
    return;
  }
  if (!judged_ && gathering_->events.empty()) gather_begin_ns_ = NowNs();
  gathering_->events.push_back(event);
  if (gathering_->events.size() >= part_events_) Submit();
}

void PartPipe::Drain() {
  if (direct_) return;
  Submit();
  while (FoldOldest(true)) {
  }
}

void PartPipe::Submit() {
  if (gathering_->events.empty()) return;
  size_t given = 0;
  if (!judged_) made_ns_ += NowNs() - gather_begin_ns_;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    parts_.push_back(std::exchange(gathering_, std::make_unique<Part>(&pool_)));
    given = parts_.size();
  }
  wake_.notify_all();
  // Fold what the thread has done; beyond in_flight_ parts, wait for the oldest.
  while (!direct_ && FoldOldest(given > in_flight_)) given -= 1;
  if (!judged_ && !direct_ && folded_ >= kProbeParts) JudgeProbe();
}

void PartPipe::JudgeProbe() {
  judged_ = true;
  // made_ns_ covers the parts submitted so far, fed_ns_ those folded: compare per part.
  const double made_per_part = static_cast<double>(made_ns_) / static_cast<double>(folded_ + parts_.size());
  const double fed_per_part = static_cast<double>(fed_ns_) / static_cast<double>(folded_);
  if (fed_per_part >= kLightShare * made_per_part) return;
  light_ = true;
  Drain();
  direct_ = true;
}

std::unique_ptr<PartPipe::Part> PartPipe::TakeOldest(bool wait) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (parts_.empty()) return nullptr;
  if (wait)
    done_.wait(lock, [&] { return parts_.front()->done; });
  else if (!parts_.front()->done)
    return nullptr;
  std::unique_ptr<Part> part = std::move(parts_.front());
  parts_.pop_front();
  --next_;
  return part;
}

bool PartPipe::FoldOldest(bool wait) {
  std::unique_ptr<Part> part = TakeOldest(wait);
  if (!part) return false;
  if (part->failure) std::rethrow_exception(part->failure);
  if (sink_.Refusal(*part->sink).empty()) {
    sink_.Fold(std::move(part->sink));
    ++folded_;
    fed_ns_ += part->feed_ns;
    return true;
  }
  // Refused: its events, and every event after them, go to the consumer directly.
  ++refused_;
  direct_ = true;
  PassDirectly(*part);
  while (std::unique_ptr<Part> later = TakeOldest(true)) {
    if (later->failure) std::rethrow_exception(later->failure);
    PassDirectly(*later);
  }
  PassDirectly(*gathering_);
  return true;
}

void PartPipe::PassDirectly(Part& part) {
  part.sink.reset();
  part.events.PassOn(0, part.events.size(), sink_);
  part.events.Clear();
}

void PartPipe::Work() {
  for (;;) {
    Part* part = nullptr;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] { return stop_ || next_ < parts_.size(); });
      if (stop_) return;
      part = parts_[next_++].get();
    }
    const int64_t begin = NowNs();
    std::exception_ptr failed = Caught([&] {
      part->sink = sink_.NewPart();
      part->events.PassOn(0, part->events.size(), *part->sink);
      part->sink->OnEnd();  // its share of the stream is complete (PartedSink::NewPart)
    });
    {
      std::lock_guard<std::mutex> lock(mutex_);
      part->failure = std::move(failed);
      part->feed_ns = NowNs() - begin;
      part->done = true;
    }
    done_.notify_all();
  }
}

}  // namespace ptprof
