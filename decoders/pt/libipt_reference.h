#pragma once
// RunLibiptDirectly answers "what does libipt itself do with this trace, with nothing of ptprof
// around it?": it drives libipt's block or instruction decoder the way a minimal client does (sync,
// drain pending events, next, resynchronise after an error) and only counts. Benchmarks time it as
// the reference for ptprof's own decode, and tests use its counts as an independent check.
#include <cstdint>
#include <span>
#include <vector>

#include "decoders/pt/pt_params.h"
#include "sideband/image_set.h"

namespace ptprof::pt {

struct ReferenceCount {
  uint64_t insns = 0;
  uint64_t blocks = 0;   // block decoder only
  uint64_t events = 0;
  uint64_t errors = 0;   // decode errors after which the decoder resynchronised
};

Result<ReferenceCount> RunLibiptDirectly(std::span<const uint8_t> trace, const ImageSet& images,
                                         const PtParams& params, bool insn_decoder);

// The same with the images already loaded into `cache` (which may be used again: libipt keeps
// its block cache with the sections, so a later decode finds it warm).
class PtImageCache;
Result<ReferenceCount> RunLibiptDirectly(std::span<const uint8_t> trace, PtImageCache& cache,
                                         const PtParams& params, bool insn_decoder);

}  // namespace ptprof::pt
