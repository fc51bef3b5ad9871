#pragma once
// PieceArena answers "where do the many small records a cache or tree makes, and never frees one
// by one, go?": one piece of T at a time from chunks, freed together when the arena goes. A
// small arena stays small: its first chunks come from the heap, 16 pieces doubling up to about
// 60 KiB (under malloc's mmap threshold, so freed heap is reused, not fresh pages); past
// kHeapPieces pieces each chunk is a whole 2 MiB huge-page slab (HugeSlabs), one page fault
// instead of 512 (on this VM a 4 KiB fault costs about 19 us; docs/performance.md, "Fresh
// memory"). A node or a block per malloc, as the call trees and the code graph had, faulted their
// tens of MB in 4 KiB at a time and freed them one by one. Pieces are not initialised; the
// arena destroys nothing (ForEach lets its owner).
#include <cstddef>
#include <memory>
#include <new>
#include <vector>

#include "src/model/huge_slabs.h"

namespace ptprof {

class PieceArenaChunks {
 public:
  PieceArenaChunks(size_t piece_bytes, size_t piece_align);
  ~PieceArenaChunks();
  PieceArenaChunks(const PieceArenaChunks&) = delete;
  PieceArenaChunks& operator=(const PieceArenaChunks&) = delete;

  void* Allocate() {
    if (chunks_.empty() || chunks_.back().used == chunks_.back().capacity) NewChunk();
    Chunk& chunk = chunks_.back();
    void* piece = chunk.memory + chunk.used * piece_bytes_;
    chunk.used += 1;
    size_ += 1;
    return piece;
  }
  size_t size() const { return size_; }
  // Calls visit(piece) for every piece handed out, in order.
  template <typename Visit>
  void ForEach(Visit&& visit) const {
    for (const Chunk& chunk : chunks_)
      for (size_t i = 0; i < chunk.used; ++i) visit(chunk.memory + i * piece_bytes_);
  }

  static constexpr size_t kFirstChunkPieces = 16;
  static constexpr size_t kLargestHeapChunkBytes = 60 << 10;
  static constexpr size_t kHeapPieces = 4096;

 private:
  struct Chunk {
    std::byte* memory = nullptr;  // from the heap, or a slab of slabs_
    size_t capacity = 0;          // pieces
    size_t used = 0;
    bool on_heap = false;
  };
  void NewChunk();
  const size_t piece_bytes_;
  const size_t piece_align_;
  std::vector<Chunk> chunks_;
  std::unique_ptr<HugeSlabs> slabs_;  // made at the first slab
  size_t size_ = 0;
};

// Typed: Allocate gives uninitialised memory for one T (construct it with placement new).
template <typename T>
class PieceArena {
 public:
  PieceArena() : chunks_(sizeof(T), alignof(T)) {}
  T* Allocate() { return static_cast<T*>(chunks_.Allocate()); }
  size_t size() const { return chunks_.size(); }
  template <typename Visit>
  void ForEach(Visit&& visit) const {
    chunks_.ForEach([&](std::byte* piece) { visit(std::launder(reinterpret_cast<T*>(piece))); });
  }

 private:
  PieceArenaChunks chunks_;
};

}  // namespace ptprof
