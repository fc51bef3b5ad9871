#pragma once
// DrainPerfRing answers "which whole perf records has the kernel written to this event's ring since
// the last call?" for the trigger events (tracepoints, breakpoints): it walks the mmap'd ring from
// data_tail to data_head, hands each record (copied out of the wrap-around) to `visit`, and moves
// data_tail past them, so the kernel can reuse the space.
#include <cstddef>
#include <cstdint>
#include <functional>

namespace ptprof::record::triggers {

// `base` is the event's mapping (the perf mmap page, then the data pages); `fallback_size` the
// data size to use when the page does not say (kernels before 4.1).
void DrainPerfRing(void* base, size_t fallback_size,
                   const std::function<void(const uint8_t* record, size_t size, uint32_t type)>& visit);

}  // namespace ptprof::record::triggers
