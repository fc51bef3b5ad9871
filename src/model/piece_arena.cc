#include "src/model/piece_arena.h"

#include <algorithm>

namespace ptprof {

PieceArenaChunks::PieceArenaChunks(size_t piece_bytes, size_t piece_align)
    : piece_bytes_((piece_bytes + piece_align - 1) / piece_align * piece_align),
      piece_align_(piece_align) {
  if (piece_bytes_ == 0 || piece_bytes_ > HugeSlabs::kSlabBytes || piece_align_ > 4096)
    throw std::bad_alloc();
}

PieceArenaChunks::~PieceArenaChunks() {
  for (const Chunk& chunk : chunks_)
    if (chunk.on_heap) ::operator delete(chunk.memory, std::align_val_t{piece_align_});
}  // slabs_ goes after

void PieceArenaChunks::NewChunk() {
  chunks_.reserve(chunks_.size() + 1);  // first, so that nothing leaks if it throws
  Chunk chunk;
  if (size_ < kHeapPieces) {
    const size_t largest = std::max<size_t>(1, kLargestHeapChunkBytes / piece_bytes_);
    chunk.capacity = chunks_.empty() ? std::min(kFirstChunkPieces, largest)
                                     : std::min(chunks_.back().capacity * 2, largest);
    chunk.memory = static_cast<std::byte*>(
        ::operator new(chunk.capacity * piece_bytes_, std::align_val_t{piece_align_}));
    chunk.on_heap = true;
  } else {
    if (!slabs_) slabs_ = std::make_unique<HugeSlabs>();
    chunk.capacity = HugeSlabs::kSlabBytes / piece_bytes_;
    chunk.memory = static_cast<std::byte*>(slabs_->Carve(chunk.capacity * piece_bytes_, piece_align_));
  }
  chunks_.push_back(chunk);
}

}  // namespace ptprof
