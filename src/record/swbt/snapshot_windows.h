#pragma once
// Snapshot windows answer "which bursts would a ring of --pre bytes have held when this trigger
// cut?" for `record --backend swbt --snapshot-on`. The tracer writes every burst with its
// CLOCK_MONOTONIC time; a snapshot is the file header plus the newest whole burst records at or
// before the cut time that fit in --pre bytes, oldest first: exactly what a ring of that size
// written by the tracer would hold at the cut.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "src/model/result.h"

namespace ptprof::record::swbt {

struct BurstRecordRef {
  uint64_t offset = 0;  // of the record in the file
  uint64_t size = 0;    // header and branches
  uint64_t time_ns = 0;
  uint32_t tid = 0;
};

// The records of a burst file (docs/formats/swbt.md), in file order; a record cut short at the
// end is left out. Errors name `name` and the offset.
Result<std::vector<BurstRecordRef>> IndexBurstRecords(std::span<const uint8_t> bytes,
                                                      const std::string& name);

// The records a ring of `pre_bytes` holds at `cut_ns` (indices into `records`, oldest first).
// Records are taken newest first while they fit; none when the first does not fit.
std::vector<size_t> RingAtCut(const std::vector<BurstRecordRef>& records, uint64_t cut_ns,
                              uint64_t pre_bytes);

// A burst file of the file's header and the chosen records.
std::vector<uint8_t> SnapshotFile(std::span<const uint8_t> bytes,
                                  const std::vector<BurstRecordRef>& records,
                                  const std::vector<size_t>& chosen);

}  // namespace ptprof::record::swbt
