#include "src/model/event_chunks.h"

namespace ptprof {

namespace {

constexpr uint8_t kWhole = kPackedWhole;
// Past this many distinct (cpu, pid, tid) triples in one segment, blocks are kept whole.
constexpr size_t kMaxContexts = 255;

}  // namespace

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
  std::lock_guard<std::mutex> lock(mutex_);
  if (spare_.size() < keep_) spare_.push_back(std::move(chunk));
}

size_t EventChunkPool::spare() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return spare_.size();
}

EventChunks::EventChunks(EventChunks&& other) noexcept
    : pool_(other.pool_),
      chunks_(std::move(other.chunks_)),
      size_(other.size_),
      whole_(std::move(other.whole_)),
      contexts_(std::move(other.contexts_)) {
  other.chunks_.clear();
  other.size_ = 0;
  other.whole_.clear();
  other.contexts_.clear();
}

EventChunks& EventChunks::operator=(EventChunks&& other) noexcept {
  if (this != &other) {
    Clear();
    pool_ = other.pool_;
    chunks_ = std::move(other.chunks_);
    size_ = other.size_;
    whole_ = std::move(other.whole_);
    contexts_ = std::move(other.contexts_);
    other.chunks_.clear();
    other.size_ = 0;
    other.whole_.clear();
    other.contexts_.clear();
  }
  return *this;
}

bool EventChunks::Pack(const TraceEvent& event, PackedEvent& out) {
  if (!Packable(event)) return false;
  const EventHeader& h = event.header;
  size_t context = contexts_.size();
  // Nearly always the last one (a segment is one CPU or thread until a task switch).
  for (size_t i = contexts_.size(); i-- > 0;) {
    const Context& c = contexts_[i];
    if (c.cpu == h.cpu && c.pid == h.pid && c.tid == h.tid) {
      context = i;
      break;
    }
  }
  if (context == contexts_.size()) {
    if (contexts_.size() == kMaxContexts) return false;
    contexts_.push_back({h.cpu, h.pid, h.tid});
  }
  PackBlock(event, out);
  out.context = static_cast<uint8_t>(context);
  return true;
}

void EventChunks::push_back(const TraceEvent& event) {
  if (size_ % EventChunkPool::kChunkEvents == 0) {
    chunks_.push_back(pool_ ? pool_->Take()
                            : std::make_unique<EventChunk>(EventChunkPool::kChunkEvents));
  }
  PackedEvent& slot = (*chunks_.back())[size_ % EventChunkPool::kChunkEvents];
  ++size_;
  if (Pack(event, slot)) return;
  slot.flags = kWhole;
  slot.first_ip_or_index = whole_.size();
  whole_.push_back(event);
}

const TraceEvent& EventChunks::operator[](size_t i) const {
  const PackedEvent& p =
      (*chunks_[i / EventChunkPool::kChunkEvents])[i % EventChunkPool::kChunkEvents];
  if (p.flags & kWhole) return whole_[p.first_ip_or_index];
  const Context& c = contexts_[p.context];
  UnpackBlock(p, c.cpu, c.pid, c.tid, unpacked_);
  return unpacked_;
}

void EventChunks::Clear() {
  for (auto& chunk : chunks_) {
    if (pool_) pool_->Give(std::move(chunk));
  }
  chunks_.clear();
  size_ = 0;
  whole_.clear();
  contexts_.clear();
}

}  // namespace ptprof
