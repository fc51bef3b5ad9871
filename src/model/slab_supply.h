#pragma once
// TakeSlab answers "where does the next 2 MiB slab come from, its pages already faulted in?": a
// helper thread maps slabs ahead and has the kernel fault in and clear their pages there, so
// that a thread carving TNT runs, code blocks or event chunks out of slabs (HugeSlabs) finds one
// ready instead of waiting in the page faults that clear it. A cold decode of a large program
// fills tens of MB of fresh slabs; on this VM the first touch of fresh memory was the largest
// part of that decode (docs/performance.md, "Slabs cleared ahead").
#include <cstddef>

namespace ptprof {

// A slab of HugeSlabs::kSlabBytes, aligned to its size and marked MADV_HUGEPAGE, as
// MapHuge(kSlabBytes) gives it (and, like it, zero): one the helper made ready when there is
// one, else mapped here. Taking one asks the helper to make the next ready; the first call starts
// the helper, and when the system refuses the thread every slab is mapped here. Give it back with
// UnmapHuge. Throws std::bad_alloc.
void* TakeSlab();

// The slabs made ready and not taken yet (for tests and benchmarks).
size_t SlabsReady();

}  // namespace ptprof
