#include "decoders/pt/segment_workers.h"

#include <algorithm>
#include <chrono>

#include "src/model/worker_threads.h"

namespace ptprof::pt {

SegmentWorkers::SegmentWorkers(size_t count, unsigned threads, size_t ahead, Decode decode)
    : ahead_(ahead ? ahead : 1),
      decode_(std::move(decode)),
      owner_(count, Owner::kNobody),
      done_(count),
      workers_(threads) {
  // Those the system refuses leave their share to the stitching thread.
  StartThreads(threads_, static_cast<unsigned>(std::min<size_t>(threads, count)),
               [this](unsigned) { Work(); });
}

size_t SegmentWorkers::FirstFree(size_t from) const {
  size_t i = std::max(from, next_free_);
  while (i < owner_.size() && owner_[i] != Owner::kNobody) ++i;
  return i;
}

void SegmentWorkers::Work() {
  for (;;) {
    size_t segment;
    {
      std::unique_lock lock(mutex_);
      changed_.wait(lock, [&] {
        return stopping_ || failure_ || FirstFree(0) == owner_.size() || outstanding_ < ahead_;
      });
      if (stopping_ || failure_) return;
      SetAsideShare();
      segment = FirstFree(0);
      if (segment == owner_.size()) return;
      owner_[segment] = Owner::kWorker;
      next_free_ = segment + 1;
      outstanding_ += 1;
      by_workers_ += 1;
    }
    auto outcome = std::make_unique<SegmentOutcome>();
    const auto start = std::chrono::steady_clock::now();
    const std::exception_ptr failed = Caught([&] { decode_(segment, *outcome); });
    const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
    {
      std::lock_guard lock(mutex_);
      if (failed && !failure_) failure_ = failed;
      done_[segment] = std::move(outcome);
      Average(costs_.worker, took.count());
    }
    changed_.notify_all();
  }
}

std::unique_ptr<SegmentOutcome> SegmentWorkers::Take(size_t segment) {
  std::unique_lock lock(mutex_);
  if (failure_) std::rethrow_exception(failure_);
  if (owner_[segment] != Owner::kWorker) {
    if (owner_[segment] == Owner::kNobody) by_stitcher_ += 1;
    owner_[segment] = Owner::kStitcher;
    return nullptr;
  }
  const bool waits = done_[segment] == nullptr;
  changed_.wait(lock, [&] { return done_[segment] != nullptr || failure_; });
  if (failure_) std::rethrow_exception(failure_);
  std::unique_ptr<SegmentOutcome> outcome = std::move(done_[segment]);
  outstanding_ -= 1;
  if (waits) {
    // The workers are behind: the stitching thread takes the next free segment on itself.
    const size_t mine = FirstFree(segment + 1);
    if (mine < owner_.size()) {
      owner_[mine] = Owner::kStitcher;
      by_stitcher_ += 1;
    }
  }
  lock.unlock();
  changed_.notify_all();
  return outcome;
}

void SegmentWorkers::SetAsideShare() {
  if (costs_.decode == 0 || costs_.pass == 0 || costs_.worker == 0 || workers_ == 0) return;
  // With a share f of the segments the stitching thread spends f * decode + (1 - f) * pass, the
  // workers (1 - f) * worker / threads; f evens them out.
  const double worker = costs_.worker / workers_;
  const double share =
      std::clamp((worker - costs_.pass) / (costs_.decode + worker - costs_.pass), 0.0, 1.0);
  for (size_t next = FirstFree(0); next < owner_.size(); next = FirstFree(next + 1)) {
    const size_t decided = by_workers_ + by_stitcher_;
    if (static_cast<double>(by_stitcher_) >= share * static_cast<double>(decided + 1)) break;
    owner_[next] = Owner::kStitcher;
    by_stitcher_ += 1;
  }
}

void SegmentWorkers::Note(Stitched work, double seconds, bool with_pass) {
  std::lock_guard lock(mutex_);
  if (work == kPassed) return Average(costs_.pass, seconds);
  Average(costs_.decode, std::max(0.0, seconds - (with_pass ? costs_.pass : 0)));
}

size_t SegmentWorkers::claimed_by_workers() const {
  std::lock_guard lock(mutex_);
  return by_workers_;
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
