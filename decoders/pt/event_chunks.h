#pragma once
// EventChunks holds the events a segment's decode produced until the stitching thread passes them
// on. A std::vector of TraceEvents that grows to hundreds of MB per segment spends most of a
// parallel decode in the kernel (fresh pages for every reallocation, copies of every event); here
// events live in fixed chunks, and a chunk freed by one segment is reused by the next one from a
// shared pool, so memory stays warm and nothing is copied twice.
#include <cstddef>
#include <memory>
#include <mutex>
#include <vector>

#include "src/model/trace_event.h"

namespace ptprof::pt {

// A chunk always holds kChunkEvents events; EventChunks knows how many of them are its own.
using EventChunk = std::vector<TraceEvent>;

// Spare chunks, shared by the threads of one decode. Keeps at most `keep` of them.
class EventChunkPool {
 public:
  static constexpr size_t kChunkEvents = 4096;
  explicit EventChunkPool(size_t keep = 256) : keep_(keep) {}
  std::unique_ptr<EventChunk> Take();
  void Give(std::unique_ptr<EventChunk> chunk);
  size_t spare() const;

 private:
  mutable std::mutex mutex_;
  size_t keep_;
  std::vector<std::unique_ptr<EventChunk>> spare_;
};

class EventChunks {
 public:
  explicit EventChunks(EventChunkPool* pool = nullptr) : pool_(pool) {}
  ~EventChunks() { Clear(); }
  EventChunks(EventChunks&& other) noexcept;
  EventChunks& operator=(EventChunks&& other) noexcept;
  EventChunks(const EventChunks&) = delete;
  EventChunks& operator=(const EventChunks&) = delete;

  void push_back(const TraceEvent& event);
  TraceEvent& back() { return (*this)[size_ - 1]; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const TraceEvent& operator[](size_t i) const {
    return (*chunks_[i / EventChunkPool::kChunkEvents])[i % EventChunkPool::kChunkEvents];
  }
  TraceEvent& operator[](size_t i) {
    return (*chunks_[i / EventChunkPool::kChunkEvents])[i % EventChunkPool::kChunkEvents];
  }
  // Drops every event; the chunks go back to the pool.
  void Clear();

 private:
  EventChunkPool* pool_;
  std::vector<std::unique_ptr<EventChunk>> chunks_;
  size_t size_ = 0;
};

}  // namespace ptprof::pt
