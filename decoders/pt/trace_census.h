#pragma once
// TraceCensus answers "what does this raw PT buffer hold?" without decoding the instruction flow:
// packets by kind, where the PSBs (the synchronisation points) are, the first and last TSC, the
// packet configuration one can infer (timing packets present, cycle-accurate mode, return
// compression cannot be told), and where packet decoding failed. `ptprof info` prints it.
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "decoders/pt/pt_params.h"

namespace ptprof::pt {

struct CensusError {
  uint64_t offset = 0;
  std::string message;
};

struct TraceCensus {
  uint64_t bytes = 0;
  uint64_t packets = 0;
  std::map<std::string, uint64_t> packets_by_kind;  // ptdump's packet names
  std::vector<uint64_t> psb_offsets;
  uint64_t first_tsc = 0, last_tsc = 0;
  bool has_tsc = false;
  uint64_t skipped_bytes = 0;          // bytes before the first PSB and inside damaged stretches
  std::vector<CensusError> errors;     // packet decode errors, each followed by a resync
};

// Counts the packets of `trace`. Fails only for an empty buffer; damaged data is recorded in
// `errors` and counting resumes at the next PSB.
Result<TraceCensus> TakeCensus(std::span<const uint8_t> trace, const PtParams& params);

}  // namespace ptprof::pt
