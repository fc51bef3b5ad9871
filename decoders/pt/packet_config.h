#pragma once
// PacketConfig answers "which libipt configuration describes this trace?": it turns ptprof's
// PtParams (CPU, timing ratios) into a pt_config with the errata that CPU needs. Internal to
// decoders/pt, the only folder that may include intel-pt.h.
#include <intel-pt.h>

#include <cstdint>
#include <optional>
#include <span>

#include "decoders/pt/pt_params.h"

namespace ptprof::pt {

// The CPU this program runs on, as libipt's "--cpu auto" reads it: family/model/stepping from
// CPUID leaf 1. Empty on other vendors than GenuineIntel (they get no errata).
std::optional<PtCpu> ReadHostCpu();

// A pt_config for `trace` (which must outlive every decoder made from it). The errata come from
// the CPU in `params`; no CPU applies none, as with libipt's "--cpu none". When libipt does not
// know the CPU, `errata_error` (if given) receives its negative error code, else 0.
pt_config MakePtConfig(std::span<const uint8_t> trace, const PtParams& params,
                       int* errata_error = nullptr);

}  // namespace ptprof::pt
