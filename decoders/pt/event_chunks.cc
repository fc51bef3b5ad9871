#include "decoders/pt/event_chunks.h"

namespace ptprof::pt {

std::unique_ptr<EventChunk> EventChunkPool::Take() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!spare_.empty()) {
      std::unique_ptr<EventChunk> chunk = std::move(spare_.back());
      spare_.pop_back();
      return chunk;
    }
  }
  return std::make_unique<EventChunk>(kChunkEvents);
}

void EventChunkPool::Give(std::unique_ptr<EventChunk> chunk) {
  // The events stay: the next user assigns over them (cheaper than destroying them here).
  std::lock_guard<std::mutex> lock(mutex_);
  if (spare_.size() < keep_) spare_.push_back(std::move(chunk));
}

size_t EventChunkPool::spare() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return spare_.size();
}

EventChunks::EventChunks(EventChunks&& other) noexcept
    : pool_(other.pool_), chunks_(std::move(other.chunks_)), size_(other.size_) {
  other.chunks_.clear();
  other.size_ = 0;
}

EventChunks& EventChunks::operator=(EventChunks&& other) noexcept {
  if (this != &other) {
    Clear();
    pool_ = other.pool_;
    chunks_ = std::move(other.chunks_);
    size_ = other.size_;
    other.chunks_.clear();
    other.size_ = 0;
  }
  return *this;
}

void EventChunks::push_back(const TraceEvent& event) {
  if (size_ % EventChunkPool::kChunkEvents == 0) {
    chunks_.push_back(pool_ ? pool_->Take()
                            : std::make_unique<EventChunk>(EventChunkPool::kChunkEvents));
  }
  TraceEvent& slot = (*chunks_.back())[size_ % EventChunkPool::kChunkEvents];
  ++size_;
  // Most events are blocks, and a reused slot mostly holds one: assign the struct itself rather
  // than through the variant's general copy.
  const auto* block = std::get_if<ExecBlock>(&event.body);
  auto* slot_block = std::get_if<ExecBlock>(&slot.body);
  if (block && slot_block) {
    slot.header = event.header;
    *slot_block = *block;
    return;
  }
  slot = event;
}

void EventChunks::Clear() {
  for (auto& chunk : chunks_) {
    if (pool_) pool_->Give(std::move(chunk));
  }
  chunks_.clear();
  size_ = 0;
}

}  // namespace ptprof::pt
