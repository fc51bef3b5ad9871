#pragma once
// EventChunks holds the events that the decode of a piece of a trace (a PT segment, a CoreSight
// piece) produced on another thread until the stitching thread passes them on. A piece of a dense
// trace decodes to millions of blocks, so how they are held decides a parallel decode's memory: a
// TraceEvent is 112 bytes, most of them unused by a plain block. Here a block whose time and
// context are the usual ones (no ns time yet, a CPU/pid/tid that recurs) is packed into 40 bytes,
// any other event is kept whole beside them, and the packed records live in fixed chunks that a
// shared pool hands from one piece to the next, so memory stays warm and nothing is copied twice.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "src/model/block_batch.h"
#include "src/model/event_sink.h"
#include "src/model/huge_slabs.h"
#include "src/model/trace_event.h"

namespace ptprof {

// A chunk is room for kChunkEvents records in memory its pool owns (records never written are
// not initialised); EventChunks knows how many of them are its own.
using EventChunk = PackedEvent;
// The events kept whole (instructions, most of all), in chunks of up to kWholeEvents, reserved
// once: a vector that grew would copy every event each time it did.
using WholeChunk = std::vector<TraceEvent>;

// The chunks of one decode, shared by its threads. Chunks of packed records are carved from huge
// page slabs (src/model/huge_slabs.h) and live as long as the pool: one given back waits in the
// pool for the next piece. Of the chunks of whole events, at most `keep` spares are kept.
class EventChunkPool {
 public:
  static constexpr size_t kChunkEvents = 4096;
  static constexpr size_t kWholeEvents = 1024;
  explicit EventChunkPool(size_t keep = 256) : keep_(keep) {}
  EventChunk* Take();
  void Give(EventChunk* chunk);
  size_t spare() const;  // chunks kept, of either kind
  size_t slabs() const;  // huge page slabs carved so far
  // The same for the chunks of events kept whole (emptied when given back, their capacity
  // kept): the next segment then writes into memory already in use.
  std::unique_ptr<WholeChunk> TakeWhole();
  void GiveWhole(std::unique_ptr<WholeChunk> chunk);

 private:
  mutable std::mutex mutex_;
  size_t keep_;
  HugeSlabs slabs_;
  std::vector<EventChunk*> spare_;
  std::vector<std::unique_ptr<WholeChunk>> spare_whole_;
};

class EventChunks {
 public:
  // Without a pool, the container makes its own when it needs a chunk.
  explicit EventChunks(EventChunkPool* pool = nullptr) : pool_(pool) {}
  ~EventChunks() { Clear(); }
  EventChunks(EventChunks&& other) noexcept;
  EventChunks& operator=(EventChunks&& other) noexcept;
  EventChunks(const EventChunks&) = delete;
  EventChunks& operator=(const EventChunks&) = delete;

  void push_back(const TraceEvent& event);
  // The blocks of a batch, in order (as push_back of each, without unpacking them). The batch
  // may hold run references (src/model/run_ref.h), which stay references: one record each.
  void Append(const BlockBatch& batch);
  // Events [from, to) to `sink`: runs of packed blocks of one cpu/pid/tid as batches (a run
  // reference expanded into the blocks it stands for), the others one by one.
  void PassOn(size_t from, size_t to, EventSink& sink) const;
  // The records [refs_begin, refs_end) hold every run reference (refs_begin == refs_end: none).
  // Only PassOn sees through one; the indices of the other calls count records.
  size_t refs_begin() const { return refs_begin_; }
  size_t refs_end() const { return refs_end_; }
  // Whether records [from, to) may hold a run reference (they lie within [refs_begin, refs_end)).
  bool MayHoldRefs(size_t from, size_t to) const {
    return refs_begin_ < refs_end_ && refs_begin_ < to && from < refs_end_;
  }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  // Event i, equal to what was pushed. A packed block is unpacked into one event the container
  // owns: the reference is good until the next call of operator[] on the same container. Record
  // i must not be a run reference.
  const TraceEvent& operator[](size_t i) const;
  // Whether event i equals `other`'s event j, as SameEvent says (packed blocks are compared
  // packed, without unpacking them). A run reference equals nothing.
  bool SameAt(size_t i, const EventChunks& other, size_t j) const;
  // Event i's trace offset.
  uint64_t OffsetAt(size_t i) const {
    const PackedEvent& p = Packed(i);
    return (p.flags & kPackedWhole) ? Whole(p.first_ip_or_index).header.offset : p.offset;
  }
  // Drops every event; the chunks go back to the pool.
  void Clear();
  // Events kept whole (not packed), for tests and benchmarks.
  size_t whole() const { return whole_size_; }

 private:
  struct Context {
    int32_t cpu, pid, tid;
  };
  bool Pack(const TraceEvent& event, PackedEvent& out);
  // Packed records of one context, run references among them, as batches of expanded blocks.
  void PassExpanded(std::span<const PackedEvent> records, BlockBatch& batch,
                    EventSink& sink) const;
  const TraceEvent& Whole(size_t i) const {
    return (*whole_[i / EventChunkPool::kWholeEvents])[i % EventChunkPool::kWholeEvents];
  }
  const PackedEvent& Packed(size_t i) const {
    return chunks_[i / EventChunkPool::kChunkEvents][i % EventChunkPool::kChunkEvents];
  }
  // The index of (cpu, pid, tid) among contexts_, added when new; kMaxContexts when full.
  size_t ContextOf(int32_t cpu, int32_t pid, int32_t tid);
  PackedEvent& Slot();  // the next record, its chunk taken when needed; size_ counts it

  EventChunkPool* pool_;
  std::unique_ptr<EventChunkPool> own_pool_;  // pool_ when none was given
  std::vector<EventChunk*> chunks_;
  size_t size_ = 0;
  size_t refs_begin_ = 0, refs_end_ = 0;
  std::vector<std::unique_ptr<WholeChunk>> whole_;
  size_t whole_size_ = 0;
  std::vector<Context> contexts_;
  mutable TraceEvent unpacked_{EventHeader{}, ExecBlock{}};
  mutable std::vector<PackedEvent> expanded_;  // PassExpanded's batches
};

}  // namespace ptprof
