#pragma once
// PartQueue shares the segments of a parted decode (decoders/pt/parted_flow.h) between worker
// threads and the folding thread: whoever is free claims the next segment nobody has, so long as
// it lies fewer than `ahead` segments past the one the folding thread waits for (the memory
// bound), and decodes it. The folding thread wants the segments in order (WaitFor) and decodes
// free ones itself while it waits, so no thread idles while a segment within reach is free.
#include <condition_variable>
#include <cstddef>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace ptprof::pt {

class PartQueue {
 public:
  // `decode(segment)` decodes segment number `segment` (0 to count - 1) on the calling thread and
  // keeps what it made where the folding thread finds it after WaitFor(segment).
  using Decode = std::function<void(size_t segment)>;
  PartQueue(size_t count, unsigned workers, size_t ahead, Decode decode);
  ~PartQueue() { Stop(); }
  PartQueue(const PartQueue&) = delete;
  PartQueue& operator=(const PartQueue&) = delete;

  // Returns when `segment` is decoded, decoding others meanwhile. Segments in increasing order.
  // Throws what a decode threw, on whichever thread it ran.
  void WaitFor(size_t segment);
  // Lets the running decodes end, starts no more and waits for the workers.
  void Stop();

  // How many segments each side decoded (for tests).
  size_t decoded_by_workers() const;

 private:
  void Work();
  // Under the lock: whether a free segment lies within reach.
  bool CanClaim() const {
    return !failure_ && next_ < done_.size() && next_ < wanted_ + ahead_;
  }
  void DecodeClaimed(std::unique_lock<std::mutex>& lock, bool by_worker);

  size_t ahead_;
  Decode decode_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<bool> done_;
  size_t next_ = 0;    // segments before it are claimed
  size_t wanted_ = 0;  // the segment the folding thread waits for or folds
  size_t by_workers_ = 0;
  bool stopping_ = false;
  // What the first decode that failed threw (out of memory): WaitFor throws it again, on the
  // folding thread, and no more segments are claimed.
  std::exception_ptr failure_;
  std::vector<std::thread> threads_;
};

}  // namespace ptprof::pt
