#include "src/model/huge_slabs.h"

#include <cstdint>
#include <cstring>
#include <set>
#include <vector>

#include <catch2/catch.hpp>

using ptprof::HugeSlabs;

TEST_CASE("HugeSlabs carves distinct, aligned, writable pieces from 2 MiB slabs", "[huge_slabs]") {
  HugeSlabs slabs;
  CHECK(slabs.slabs() == 0);
  constexpr size_t kPiece = 4096 * 40;  // an EventChunkPool chunk
  std::set<uintptr_t> starts;
  std::vector<unsigned char*> pieces;
  for (int i = 0; i < 30; ++i) {
    auto* piece = static_cast<unsigned char*>(slabs.Carve(kPiece));
    const auto at = reinterpret_cast<uintptr_t>(piece);
    CHECK(at % 64 == 0);
    // Each piece lies within one slab: slabs are aligned to their size.
    if (!HugeSlabs::PiecesOnTheHeap())
      CHECK(at / HugeSlabs::kSlabBytes == (at + kPiece - 1) / HugeSlabs::kSlabBytes);
    for (uintptr_t other : starts) CHECK((at + kPiece <= other || other + kPiece <= at));
    starts.insert(at);
    std::memset(piece, i, kPiece);
    pieces.push_back(piece);
  }
  // 12 pieces of 160 KiB fit a slab: 30 take three.
  CHECK(slabs.slabs() == 3);
  // What was written to each piece is still there: no later piece overlapped it.
  for (size_t i = 0; i < pieces.size(); ++i) {
    CHECK(pieces[i][0] == i);
    CHECK(pieces[i][kPiece - 1] == i);
  }
}

TEST_CASE("HugeSlabs aligns each piece as asked and refuses a piece larger than a slab",
          "[huge_slabs]") {
  HugeSlabs slabs;
  CHECK(slabs.Carve(0) != nullptr);  // an empty piece still comes from a slab
  CHECK(slabs.slabs() == 1);
  auto* a = static_cast<char*>(slabs.Carve(1));
  auto* b = static_cast<char*>(slabs.Carve(1));
  auto* c = static_cast<char*>(slabs.Carve(3, 8));
  auto* d = static_cast<char*>(slabs.Carve(8, 8));
  if (!HugeSlabs::PiecesOnTheHeap()) {
    CHECK(b - a == 64);  // 64 bytes unless asked otherwise
    CHECK(c - b == 8);   // b took one byte; c starts at the next multiple of 8
    CHECK(d - c == 8);
  }
  CHECK(reinterpret_cast<uintptr_t>(d) % 8 == 0);
  CHECK(reinterpret_cast<uintptr_t>(slabs.Carve(1, 4096)) % 4096 == 0);
  CHECK_THROWS_AS(slabs.Carve(HugeSlabs::kSlabBytes + 1), std::bad_alloc);
  CHECK(slabs.Carve(HugeSlabs::kSlabBytes) != nullptr);  // a whole slab of its own
  CHECK(slabs.slabs() == 2);
}

TEST_CASE("MapHuge gives memory aligned to a slab, writable to its end", "[huge_slabs]") {
  const size_t bytes = 2 * HugeSlabs::kSlabBytes;
  auto* memory = static_cast<unsigned char*>(ptprof::MapHuge(bytes));
  CHECK(reinterpret_cast<uintptr_t>(memory) % HugeSlabs::kSlabBytes == 0);
  memory[0] = 1;
  memory[bytes - 1] = 2;
  CHECK(memory[0] + memory[bytes - 1] == 3);
  ptprof::UnmapHuge(memory, bytes);
  CHECK_THROWS_AS(ptprof::MapHuge(HugeSlabs::kSlabBytes + 1), std::bad_alloc);  // not whole slabs
}
