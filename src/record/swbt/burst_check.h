#pragma once
// BurstCheck answers "is every burst of a swbt archive something the program could really have
// done?": each `from` must be a branch instruction (decoded from the mapped file), a direct one
// must go exactly to its target, and between one branch's `to` and the next `from` the code must
// run straight (only non-branches and not-taken conditional jumps). Used by the golden tests and
// by `tools/bench/swbt_overhead.py`; the colleague's `ptprof validate` does the same against a
// PT flow.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "decoders/lbr/swbt_bursts.h"
#include "src/model/result.h"
#include "src/record/swbt/proc_maps.h"

namespace ptprof::swbt {

struct BurstCheckSummary {
  uint64_t bursts = 0;
  uint64_t branches = 0;
  uint64_t verified = 0;      // branches whose instruction was decoded and found consistent
  uint64_t unverifiable = 0;  // in memory with no file behind it ([vdso], JIT code)
  uint64_t bad = 0;           // inconsistent branches
  std::vector<std::string> counterexamples;  // the first few, one line each
};

// Reads `size` bytes of the file at `path` from `offset`; fewer when the file is shorter.
using ReadFileFn = std::function<std::vector<uint8_t>(const std::string& path, uint64_t offset,
                                                      size_t size)>;

// Checks the bursts of one process image against its mappings.
void CheckBursts(const std::vector<SwbtBurst>& bursts, const std::vector<MapsLine>& maps,
                 const ReadFileFn& read_file, BurstCheckSummary& summary);

}  // namespace ptprof::swbt
