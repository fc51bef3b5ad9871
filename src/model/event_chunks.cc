#include "src/model/event_chunks.h"

#include "src/model/event_equality.h"
#include "src/model/run_ref.h"

#include <algorithm>
#include <cstring>

namespace ptprof {

namespace {

constexpr uint8_t kWhole = kPackedWhole;
// Past this many distinct (cpu, pid, tid) triples in one segment, blocks are kept whole.
constexpr size_t kMaxContexts = 255;

// The last spare of `spare` (under `mutex`), or `make()` when none is kept.
template <class T, class Make>
std::unique_ptr<T> TakeSpare(std::mutex& mutex, std::vector<std::unique_ptr<T>>& spare, Make make) {
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (!spare.empty()) {
      std::unique_ptr<T> chunk = std::move(spare.back());
      spare.pop_back();
      return chunk;
    }
  }
  return make();
}

// An empty chunk of events kept whole, with room for kWholeEvents.
std::unique_ptr<WholeChunk> NewWholeChunk() {
  auto chunk = std::make_unique<WholeChunk>();
  chunk->reserve(EventChunkPool::kWholeEvents);
  return chunk;
}

// Keeps `chunk` in `spare` unless `keep` are kept already.
template <class T>
void GiveSpare(std::mutex& mutex, std::vector<std::unique_ptr<T>>& spare, size_t keep,
               std::unique_ptr<T> chunk) {
  std::lock_guard<std::mutex> lock(mutex);
  if (spare.size() < keep) spare.push_back(std::move(chunk));
}

}  // namespace

EventChunk* EventChunkPool::Take() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!spare_.empty()) {
    EventChunk* chunk = spare_.back();
    spare_.pop_back();
    return chunk;
  }
  // Room for the records, not records: a PackedEvent is an aggregate (an implicit-lifetime type),
  // so each one comes to life when the container first writes it.
  return static_cast<EventChunk*>(slabs_.Carve(kChunkEvents * sizeof(EventChunk)));
}

void EventChunkPool::Give(EventChunk* chunk) {
  std::lock_guard<std::mutex> lock(mutex_);
  spare_.push_back(chunk);
}

size_t EventChunkPool::slabs() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return slabs_.slabs();
}

std::unique_ptr<WholeChunk> EventChunkPool::TakeWhole() {
  return TakeSpare(mutex_, spare_whole_, NewWholeChunk);
}

void EventChunkPool::GiveWhole(std::unique_ptr<WholeChunk> chunk) {
  chunk->clear();
  GiveSpare(mutex_, spare_whole_, keep_, std::move(chunk));
}

size_t EventChunkPool::spare() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return spare_.size() + spare_whole_.size();
}

EventChunks::EventChunks(EventChunks&& other) noexcept
    : pool_(other.pool_),
      own_pool_(std::move(other.own_pool_)),
      chunks_(std::move(other.chunks_)),
      size_(other.size_),
      refs_begin_(other.refs_begin_),
      refs_end_(other.refs_end_),
      whole_(std::move(other.whole_)),
      whole_size_(other.whole_size_),
      contexts_(std::move(other.contexts_)) {
  if (own_pool_) other.pool_ = nullptr;  // the pool went with the chunks
  other.chunks_.clear();
  other.size_ = other.refs_begin_ = other.refs_end_ = other.whole_size_ = 0;
  other.whole_.clear();
  other.contexts_.clear();
}

EventChunks& EventChunks::operator=(EventChunks&& other) noexcept {
  if (this != &other) {
    Clear();
    pool_ = other.pool_;
    own_pool_ = std::move(other.own_pool_);
    if (own_pool_) other.pool_ = nullptr;
    chunks_ = std::move(other.chunks_);
    size_ = other.size_;
    refs_begin_ = other.refs_begin_;
    refs_end_ = other.refs_end_;
    whole_ = std::move(other.whole_);
    whole_size_ = other.whole_size_;
    contexts_ = std::move(other.contexts_);
    other.chunks_.clear();
    other.size_ = other.refs_begin_ = other.refs_end_ = other.whole_size_ = 0;
    other.whole_.clear();
    other.contexts_.clear();
  }
  return *this;
}

size_t EventChunks::ContextOf(int32_t cpu, int32_t pid, int32_t tid) {
  // Nearly always the last one (a segment is one CPU or thread until a task switch).
  for (size_t i = contexts_.size(); i-- > 0;) {
    const Context& c = contexts_[i];
    if (c.cpu == cpu && c.pid == pid && c.tid == tid) return i;
  }
  if (contexts_.size() == kMaxContexts) return kMaxContexts;
  contexts_.push_back({cpu, pid, tid});
  return contexts_.size() - 1;
}

bool EventChunks::Pack(const TraceEvent& event, PackedEvent& out) {
  if (!Packable(event)) return false;
  const EventHeader& h = event.header;
  const size_t context = ContextOf(h.cpu, h.pid, h.tid);
  if (context == kMaxContexts) return false;
  PackBlock(event, out);
  out.context = static_cast<uint8_t>(context);
  return true;
}

PackedEvent& EventChunks::Slot() {
  if (size_ % EventChunkPool::kChunkEvents == 0) {
    if (!pool_) {
      own_pool_ = std::make_unique<EventChunkPool>();
      pool_ = own_pool_.get();
    }
    chunks_.push_back(pool_->Take());
  }
  PackedEvent& slot = chunks_.back()[size_ % EventChunkPool::kChunkEvents];
  ++size_;
  return slot;
}

void EventChunks::Append(const BlockBatch& batch) {
  const size_t context =
      batch.clock ? kMaxContexts : ContextOf(batch.cpu, batch.pid, batch.tid);
  if (context == kMaxContexts) {
    // Stamped with ns, or too many contexts: kept whole, as push_back keeps them.
    TraceEvent event{EventHeader{}, ExecBlock{}};
    for (size_t i = 0; i < batch.blocks.size(); ++i) {
      batch.Unpack(i, event);
      push_back(event);
    }
    return;
  }
  size_t i = 0;
  const size_t n = batch.blocks.size();
  while (i < n) {
    // As many as the current chunk holds, copied at once.
    PackedEvent* out = &Slot();
    size_t room = EventChunkPool::kChunkEvents - (size_ - 1) % EventChunkPool::kChunkEvents;
    const size_t take = std::min(room, n - i);
    size_ += take - 1;
    std::memcpy(static_cast<void*>(out), &batch.blocks[i], take * sizeof(PackedEvent));
    const size_t first = size_ - take;  // the index of out[0]
    for (size_t k = 0; k < take; ++k) {
      out[k].flags &= static_cast<uint8_t>(~kWhole);
      out[k].context = static_cast<uint8_t>(context);
      if (IsRunRef(out[k])) {
        if (refs_begin_ == refs_end_) refs_begin_ = first + k;
        refs_end_ = first + k + 1;
      }
    }
    i += take;
  }
}

void EventChunks::PassOn(size_t from, size_t to, EventSink& sink) const {
  size_t i = from;
  while (i < to) {
    const PackedEvent& first = Packed(i);
    if (first.flags & kWhole) {
      sink.OnEvent(Whole(first.first_ip_or_index));
      ++i;
      continue;
    }
    // A run of packed blocks of one context within this chunk: one batch.
    const size_t chunk_end = (i / EventChunkPool::kChunkEvents + 1) * EventChunkPool::kChunkEvents;
    const size_t limit = std::min(to, chunk_end);
    const PackedEvent* run = &first;
    size_t n = 1;
    while (i + n < limit && !(run[n].flags & kWhole) && run[n].context == first.context) ++n;
    const Context& c = contexts_[first.context];
    BlockBatch batch;
    batch.cpu = c.cpu;
    batch.pid = c.pid;
    batch.tid = c.tid;
    if (MayHoldRefs(i, i + n)) {
      PassExpanded(std::span<const PackedEvent>(run, n), batch, sink);
    } else {
      batch.blocks = std::span<const PackedEvent>(run, n);
      sink.OnBlocks(batch);
    }
    i += n;
  }
}

void EventChunks::PassExpanded(std::span<const PackedEvent> records, BlockBatch& batch,
                               EventSink& sink) const {
  // Batches of a few hundred blocks, which stay in the cache from here to the consumer.
  constexpr size_t kExpanded = 512;
  if (expanded_.empty()) expanded_.resize(kExpanded + kRunRefMaxBlocks);
  PackedEvent* out = expanded_.data();
  size_t count = 0;
  for (const PackedEvent& record : records) {
    if (IsRunRef(record)) {
      ExpandRunRef(record, &out[count]);
      count += RunRefBlocks(record);
    } else {
      out[count++] = record;
    }
    if (count >= kExpanded) {
      batch.blocks = std::span<const PackedEvent>(out, count);
      sink.OnBlocks(batch);
      count = 0;
    }
  }
  if (count) {
    batch.blocks = std::span<const PackedEvent>(out, count);
    sink.OnBlocks(batch);
  }
}

void EventChunks::push_back(const TraceEvent& event) {
  PackedEvent& slot = Slot();
  if (Pack(event, slot)) return;
  slot.flags = kWhole;
  if (whole_size_ % EventChunkPool::kWholeEvents == 0)
    whole_.push_back(pool_ ? pool_->TakeWhole() : NewWholeChunk());
  slot.first_ip_or_index = whole_size_++;
  WholeChunk& chunk = *whole_.back();
  if (const auto* insn = std::get_if<Instruction>(&event.body)) {
    // Made in place, without a visit of the variant to copy it. (Not emplace_back(header,
    // insn): an aggregate made from parentheses needs clang 16.)
    TraceEvent& kept = chunk.emplace_back();
    kept.header = event.header;
    kept.body.emplace<Instruction>(*insn);
  } else {
    chunk.push_back(event);
  }
}

const TraceEvent& EventChunks::operator[](size_t i) const {
  const PackedEvent& p = Packed(i);
  if (p.flags & kWhole) return Whole(p.first_ip_or_index);
  const Context& c = contexts_[p.context];
  UnpackBlock(p, c.cpu, c.pid, c.tid, unpacked_);
  return unpacked_;
}

bool EventChunks::SameAt(size_t i, const EventChunks& other, size_t j) const {
  const PackedEvent& a = Packed(i);
  const PackedEvent& b = other.Packed(j);
  if ((a.flags | b.flags) & kPackedRunRef) return false;
  if ((a.flags | b.flags) & kWhole) return SameEvent((*this)[i], other[j]);
  const Context& x = contexts_[a.context];
  const Context& y = other.contexts_[b.context];
  return a.first_ip_or_index == b.first_ip_or_index && a.tsc == b.tsc && a.offset == b.offset &&
         a.span == b.span && a.insns == b.insns && a.last_insn_size == b.last_insn_size &&
         a.end == b.end && a.mode == b.mode && a.flags == b.flags && x.cpu == y.cpu &&
         x.pid == y.pid && x.tid == y.tid;
}

void EventChunks::Clear() {
  for (EventChunk* chunk : chunks_) pool_->Give(chunk);
  chunks_.clear();
  size_ = refs_begin_ = refs_end_ = 0;
  for (auto& chunk : whole_) {
    if (pool_) pool_->GiveWhole(std::move(chunk));
  }
  whole_.clear();
  whole_size_ = 0;
  contexts_.clear();
}

}  // namespace ptprof
