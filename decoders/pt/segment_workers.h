#pragma once
// SegmentWorkers decodes a list of PSB segments on worker threads while the stitching thread
// takes their outcomes in the list's order. A worker starts a segment only while fewer than
// `ahead` outcomes wait to be taken, so memory stays bounded when the stitching is slower.
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "decoders/pt/segment_decode.h"

namespace ptprof::pt {

class SegmentWorkers {
 public:
  // `decode(segment, outcome)` decodes the segment numbered `segment`.
  using Decode = std::function<void(size_t segment, SegmentOutcome& outcome)>;
  SegmentWorkers(std::vector<size_t> segments, unsigned threads, size_t ahead, Decode decode);
  ~SegmentWorkers() { Stop(); }
  SegmentWorkers(const SegmentWorkers&) = delete;
  SegmentWorkers& operator=(const SegmentWorkers&) = delete;

  // Waits for the next segment of the list and hands over its outcome; `segment` must be it.
  std::unique_ptr<SegmentOutcome> Take(size_t segment);
  // Lets the running decodes end, starts no more and waits for the threads.
  void Stop();

 private:
  void Work();

  std::vector<size_t> segments_;
  size_t ahead_;
  Decode decode_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<std::unique_ptr<SegmentOutcome>> done_;  // by position in segments_
  size_t claimed_ = 0;  // positions handed to a worker so far
  size_t taken_ = 0;    // positions taken by the stitching thread so far
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace ptprof::pt
