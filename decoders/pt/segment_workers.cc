#include "decoders/pt/segment_workers.h"

#include <cassert>

namespace ptprof::pt {

SegmentWorkers::SegmentWorkers(std::vector<size_t> segments, unsigned threads, size_t ahead,
                               Decode decode)
    : segments_(std::move(segments)),
      ahead_(ahead ? ahead : 1),
      decode_(std::move(decode)),
      done_(segments_.size()) {
  for (unsigned i = 0; i < threads && i < segments_.size(); ++i)
    threads_.emplace_back([this] { Work(); });
}

void SegmentWorkers::Work() {
  for (;;) {
    size_t position;
    {
      std::unique_lock lock(mutex_);
      changed_.wait(lock, [&] {
        return stopping_ || claimed_ == segments_.size() || claimed_ < taken_ + ahead_;
      });
      if (stopping_ || claimed_ == segments_.size()) return;
      position = claimed_++;
    }
    auto outcome = std::make_unique<SegmentOutcome>();
    decode_(segments_[position], *outcome);
    {
      std::lock_guard lock(mutex_);
      done_[position] = std::move(outcome);
    }
    changed_.notify_all();
  }
}

std::unique_ptr<SegmentOutcome> SegmentWorkers::Take(size_t segment) {
  std::unique_lock lock(mutex_);
  assert(taken_ < segments_.size() && segments_[taken_] == segment);
  (void)segment;
  const size_t position = taken_;
  changed_.wait(lock, [&] { return done_[position] != nullptr; });
  std::unique_ptr<SegmentOutcome> outcome = std::move(done_[position]);
  taken_ += 1;
  lock.unlock();
  changed_.notify_all();
  return outcome;
}

void SegmentWorkers::Stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  for (std::thread& thread : threads_)
    if (thread.joinable()) thread.join();
  threads_.clear();
}

}  // namespace ptprof::pt
