#pragma once
// SegmentWorkers shares the PSB segments of a parallel decode between worker threads, which decode
// them into memory, and the stitching thread, which takes them in order, passes the workers' on
// and decodes the others itself, straight into the stream. Who decodes a segment is decided once:
// a worker claims the next segment nobody has (while fewer than `ahead` of its outcomes wait),
// first setting aside for the stitching thread the share of segments that keeps both sides busy
// by what each has cost so far (Note: the stitching thread's time for a segment it decoded and
// for one it passed on; the workers time their own); the stitching thread also decodes a segment
// that nobody has when it comes to it, and keeps the next free one each time it had to wait. So
// a consumer that keeps the stitching thread busy leaves the decoding to the workers, and a light
// one lets it decode its part.
#include <condition_variable>
#include <cstddef>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "decoders/pt/segment_decode.h"

namespace ptprof::pt {

class SegmentWorkers {
 public:
  // `decode(segment, outcome)` decodes the segment numbered `segment` (0 to count - 1).
  using Decode = std::function<void(size_t segment, SegmentOutcome& outcome)>;
  SegmentWorkers(size_t count, unsigned threads, size_t ahead, Decode decode);
  ~SegmentWorkers() { Stop(); }
  SegmentWorkers(const SegmentWorkers&) = delete;
  SegmentWorkers& operator=(const SegmentWorkers&) = delete;

  // For the stitching thread, segments in order: a worker's outcome for `segment` (waiting for
  // it), or null when the stitching thread decodes it itself. Throws what a worker's decode
  // threw.
  std::unique_ptr<SegmentOutcome> Take(size_t segment);
  // The stitching thread's time for its last segment, decoded itself or passed on. A decode
  // `with_pass` also passed on the worker's segment before it (StreamedSegment does when it
  // joins): what a pass-on costs is taken off.
  enum Stitched { kDecoded, kPassed };
  void Note(Stitched work, double seconds, bool with_pass = false);
  // Lets the running decodes end, starts no more and waits for the threads.
  void Stop();

  // How many segments the workers decoded (or are decoding).
  size_t claimed_by_workers() const;

 private:
  enum class Owner : unsigned char { kNobody, kWorker, kStitcher };
  void Work();
  // The first segment from `from` on that nobody has (count when none), under the lock.
  size_t FirstFree(size_t from) const;
  // Sets aside for the stitching thread, under the lock, the free segments before the next one a
  // worker claims that keep its share where the costs so far say.
  void SetAsideShare();

  // Mean seconds a segment: the stitching thread decoding one, passing one on, a worker
  // decoding one (0: not measured yet).
  struct Costs {
    double decode = 0, pass = 0, worker = 0;
  };
  static void Average(double& mean, double seconds) {
    mean = mean == 0 ? seconds : 0.75 * mean + 0.25 * seconds;
  }

  size_t ahead_;
  Decode decode_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<Owner> owner_;
  std::vector<std::unique_ptr<SegmentOutcome>> done_;
  size_t next_free_ = 0;    // no segment before it is free
  size_t outstanding_ = 0;  // claimed by workers, not taken yet
  size_t by_workers_ = 0;
  size_t by_stitcher_ = 0;  // set aside for the stitching thread or taken by it
  unsigned workers_;        // threads asked for
  Costs costs_;
  bool stopping_ = false;
  // What the first worker's decode that failed threw (out of memory): Take throws it again, on
  // the stitching thread, and the workers claim no more.
  std::exception_ptr failure_;
  std::vector<std::thread> threads_;
};

}  // namespace ptprof::pt
