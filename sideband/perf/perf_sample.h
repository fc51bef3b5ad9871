#pragma once
// Parsing of the sample-shaped parts of records, whose layout is set by the attr's sample_type:
// PERF_RECORD_SAMPLE bodies (answers "what did this sample record: ip, pid/tid, time, cpu,
// callchain, branch stack, ...?") and the sample_id trailer that ends other records when
// attr.sample_id_all is set (answers "when, on which CPU and for which thread did this happen?").
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "sideband/perf/perf_attr.h"
#include "src/model/result.h"

namespace ptprof::perf {

// The fields a sample_id trailer (or a sample) may carry.
struct SampleId {
  std::optional<uint32_t> pid, tid;
  std::optional<uint64_t> time;
  std::optional<uint64_t> id;          // SAMPLE_ID, or SAMPLE_IDENTIFIER when only that is sampled
  std::optional<uint64_t> identifier;  // SAMPLE_IDENTIFIER itself (the same id in perf's files)
  std::optional<uint64_t> stream_id;
  std::optional<uint32_t> cpu;
};

// One hardware branch record (LBR): from, to, and the flags word (mispred bit 0, predicted bit 1,
// in_tx 2, abort 3, cycles 4..19, type 20..23).
struct BranchEntry {
  uint64_t from = 0;
  uint64_t to = 0;
  uint64_t flags = 0;
  bool mispredicted() const { return flags & 1; }
  bool predicted() const { return flags & 2; }
  uint16_t cycles() const { return static_cast<uint16_t>((flags >> 4) & 0xffff); }
};

struct PerfSample {
  SampleId id;  // pid/tid/time/id/stream_id/cpu as in a trailer
  std::optional<uint64_t> ip;
  std::optional<uint64_t> addr;
  std::optional<uint64_t> period;
  std::vector<uint64_t> read_values;  // PERF_SAMPLE_READ: the counter values, in order
  std::vector<uint64_t> callchain;
  uint32_t raw_size = 0;
  std::vector<BranchEntry> branch_stack;
  std::optional<uint64_t> branch_hw_index;
  uint64_t regs_user_abi = 0;
  std::vector<uint64_t> regs_user;
  uint64_t stack_user_size = 0;
  std::optional<uint64_t> weight;
  std::optional<uint64_t> data_src;
  std::optional<uint64_t> transaction;
  uint64_t regs_intr_abi = 0;
  std::vector<uint64_t> regs_intr;
  std::optional<uint64_t> phys_addr;
  std::optional<uint64_t> cgroup;
  std::optional<uint64_t> data_page_size;
  std::optional<uint64_t> code_page_size;
  uint64_t aux_size = 0;
};

// Parses a PERF_RECORD_SAMPLE body (the bytes after the 8-byte header) for `attr`. `offset` is the
// body's file offset, for errors. Counts (callchain, branch stack) are checked against the bytes
// that remain before anything is allocated.
Result<PerfSample> ParseSample(std::span<const uint8_t> body, const PerfEventAttr& attr, uint64_t offset);

// Size in bytes of the sample_id trailer `attr` puts at the end of non-sample records (0 when
// sample_id_all is off).
size_t SampleIdTrailerSize(const PerfEventAttr& attr);

// Parses the trailer at the end of `body` (a non-sample record body). Fails when the body is
// shorter than the trailer.
Result<SampleId> ParseSampleIdTrailer(std::span<const uint8_t> body, const PerfEventAttr& attr,
                                      uint64_t offset);

}  // namespace ptprof::perf
