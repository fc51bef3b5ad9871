#pragma once
// TakeSlab answers "where does the next 2 MiB slab come from, its pages already faulted in?": a
// helper thread maps slabs ahead and has the kernel fault in and clear their pages there, so
// that a thread carving TNT runs, code blocks or event chunks out of slabs (HugeSlabs) finds one
// ready instead of waiting in the page faults that clear it. A cold decode of a large program
// fills tens of MB of fresh slabs; on this VM the first touch of fresh memory was the largest
// part of that decode (docs/performance.md, "Slabs cleared ahead"). Slabs no longer used come
// back (GiveSlab) and are taken again before any fresh one.
#include <cstddef>

namespace ptprof {

// A slab of HugeSlabs::kSlabBytes, aligned to its size and marked MADV_HUGEPAGE, as
// MapHuge(kSlabBytes) gives it: one given back (GiveSlab) when there is one, else one the helper
// made ready, else mapped here. Its bytes are whatever they are: a slab given back holds what its
// last user left (a fresh one is zero). Taking a fresh one asks the helper to make the next
// ready; the first call starts the helper, and when the system refuses the thread every fresh
// slab is mapped here. Give it back with GiveSlab (or UnmapHuge). Throws std::bad_alloc.
void* TakeSlab();

// Slabs a process keeps given back, at most: 32 MiB that a decode's next parts, heads and tails
// or code graph (or the next decode's) take instead of fresh memory.
inline constexpr size_t kKeptSlabs = 16;

// `slab` (from TakeSlab; null: nothing) is no longer used: kept for the next TakeSlab while fewer
// than kKeptSlabs are, else unmapped. The parts of a parallel decode are made and dropped one
// after the other, and fresh memory is what a first touch costs most on some virtual machines
// (docs/performance.md, "Slabs given back").
void GiveSlab(void* slab);

// The slabs given back and not taken again (for tests and benchmarks).
size_t SlabsKept();

// The slabs made ready and not taken yet (for tests and benchmarks).
size_t SlabsReady();

}  // namespace ptprof
