#include "decoders/pt/part_queue.h"

#include <algorithm>

#include "src/model/worker_threads.h"

namespace ptprof::pt {

PartQueue::PartQueue(size_t count, unsigned workers, size_t ahead, Decode decode)
    : ahead_(std::max<size_t>(ahead, 1)), decode_(std::move(decode)), done_(count, false) {
  // Those the system refuses leave their share to the folding thread.
  StartThreads(threads_, workers, [this](unsigned) { Work(); });
}

void PartQueue::DecodeClaimed(std::unique_lock<std::mutex>& lock, bool by_worker) {
  const size_t segment = next_++;
  if (by_worker) ++by_workers_;
  lock.unlock();
  const std::exception_ptr failed = Caught([&] { decode_(segment); });
  lock.lock();
  if (failed && !failure_) failure_ = failed;
  done_[segment] = true;
  changed_.notify_all();
}

void PartQueue::Work() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    changed_.wait(lock, [&] { return stopping_ || failure_ || CanClaim() || next_ >= done_.size(); });
    if (stopping_ || failure_ || next_ >= done_.size()) return;
    DecodeClaimed(lock, true);
  }
}

void PartQueue::WaitFor(size_t segment) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (segment != wanted_) {
    wanted_ = segment;
    changed_.notify_all();  // the window moved on
  }
  while (!done_[segment] || failure_) {
    if (failure_) std::rethrow_exception(failure_);
    if (CanClaim()) {
      DecodeClaimed(lock, false);
      continue;
    }
    changed_.wait(lock);
  }
}

void PartQueue::Stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  for (std::thread& thread : threads_) thread.join();
  threads_.clear();
}

size_t PartQueue::decoded_by_workers() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return by_workers_;
}

}  // namespace ptprof::pt
