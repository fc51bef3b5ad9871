#include "src/pipeline/stream_merge.h"

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>

#include "src/model/worker_threads.h"

namespace ptprof {

namespace {

constexpr size_t kBatch = 256;  // events handed over at once

// One stream's queue of event batches between its producer thread and the merge.
class StreamQueue : public EventSink {
 public:
  explicit StreamQueue(size_t max_batches) : max_batches_(std::max<size_t>(max_batches, 1)) {}

  // Producer side.
  void OnEvent(const TraceEvent& event) override {
    pending_.push_back(event);
    if (pending_.size() >= kBatch) Flush();
  }
  void Close() {
    Flush();
    std::lock_guard lock(mutex_);
    closed_ = true;
    changed_.notify_all();
  }
  // The merge will take no more: the producer's events are dropped from now on, without waiting.
  void Cancel() {
    std::lock_guard lock(mutex_);
    cancelled_ = true;
    batches_.clear();
    changed_.notify_all();
  }

  // Merge side: the next batch, waiting for one; false when the stream has ended.
  bool Take(std::vector<TraceEvent>& batch) {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [this] { return !batches_.empty() || closed_; });
    if (batches_.empty()) return false;
    batch = std::move(batches_.front());
    batches_.pop_front();
    changed_.notify_all();
    return true;
  }

 private:
  void Flush() {
    if (pending_.empty()) return;
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [this] { return batches_.size() < max_batches_ || cancelled_; });
    if (!cancelled_) batches_.push_back(std::move(pending_));
    pending_.clear();
    changed_.notify_all();
  }

  const size_t max_batches_;
  std::vector<TraceEvent> pending_;  // producer-only
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<std::vector<TraceEvent>> batches_;
  bool closed_ = false;
  bool cancelled_ = false;
};

// The merge's view of one stream: its current batch and position, and the key of its next event.
struct Head {
  std::vector<TraceEvent> batch;
  size_t next = 0;
  uint64_t key = 0;       // of batch[next]
  uint64_t previous = 0;  // key of the event before it
  bool ended = false;
};

// Makes `head` point at the stream's next event (taking a batch when needed); false at its end.
bool Advance(Head& head, StreamQueue& queue) {
  while (!head.ended && head.next >= head.batch.size()) {
    head.batch.clear();
    head.next = 0;
    if (!queue.Take(head.batch)) head.ended = true;
  }
  if (head.ended) return false;
  head.key = MergeKey(head.batch[head.next], head.previous);
  return true;
}

}  // namespace

uint64_t MergeKey(const TraceEvent& event, uint64_t previous) {
  uint64_t own = event.header.time_ns != kUnknownTime ? event.header.time_ns : event.header.tsc;
  if (own == kUnknownTime) return previous;
  return std::max(own, previous);
}

void MergeStreams(const std::vector<StreamProducer>& producers, EventSink& out,
                  size_t queue_events) {
  if (producers.size() == 1) {
    producers.front()(out);
    return;
  }
  const size_t max_batches = (queue_events + kBatch - 1) / kBatch;
  std::vector<std::unique_ptr<StreamQueue>> queues;
  for (size_t i = 0; i < producers.size(); ++i)
    queues.push_back(std::make_unique<StreamQueue>(max_batches));
  // What the first producer that failed threw (out of memory): thrown again here once every
  // stream has ended (the failed one where it failed).
  std::mutex failure_mutex;
  std::exception_ptr failure;
  std::vector<std::thread> threads;
  const ThreadsStarted started =
      StartThreads(threads, static_cast<unsigned>(producers.size()), [&](unsigned i) {
        if (const std::exception_ptr failed = Caught([&] { producers[i](*queues[i]); })) {
          std::lock_guard lock(failure_mutex);
          if (!failure) failure = failed;
        }
        queues[i]->Close();
      });
  if (started.refused) {
    // No thread for a stream: the streams cannot be merged as they come. Those started run to
    // their end into nothing, and the refusal goes up.
    for (auto& queue : queues) queue->Cancel();
    for (std::thread& thread : threads) thread.join();
    std::rethrow_exception(started.refused);
  }

  std::vector<Head> heads(producers.size());
  for (size_t i = 0; i < heads.size(); ++i) Advance(heads[i], *queues[i]);
  for (;;) {
    size_t best = heads.size();
    for (size_t i = 0; i < heads.size(); ++i) {
      if (heads[i].ended) continue;
      if (best == heads.size() || heads[i].key < heads[best].key) best = i;
    }
    if (best == heads.size()) break;
    Head& head = heads[best];
    out.OnEvent(head.batch[head.next]);
    head.previous = head.key;
    head.next += 1;
    Advance(head, *queues[best]);
  }
  for (std::thread& thread : threads) thread.join();
  if (failure) std::rethrow_exception(failure);
}

}  // namespace ptprof
