#pragma once
// PerfEventAttr is one perf_event_attr as stored in a perf.data file; AttrSet answers "which event
// (attr) does this record belong to?", the question every sample and sample_id trailer needs
// answered before it can be parsed, because their layout depends on that attr's sample_type.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "src/model/result.h"

namespace ptprof::perf {

struct PerfEventAttr {
  uint32_t type = 0;
  uint32_t size = 0;  // the size the writer declared (64 for the oldest files)
  uint64_t config = 0;
  uint64_t sample_period = 0;  // or sample_freq when freq is set
  uint64_t sample_type = 0;
  uint64_t read_format = 0;
  uint64_t flags = 0;  // the bitfield word: disabled, inherit, ..., sample_id_all (bit 18), ...
  uint32_t wakeup_events = 0;
  uint32_t bp_type = 0;
  uint64_t config1 = 0;
  uint64_t config2 = 0;
  uint64_t branch_sample_type = 0;
  uint64_t sample_regs_user = 0;
  uint32_t sample_stack_user = 0;
  int32_t clockid = 0;
  uint64_t sample_regs_intr = 0;
  uint32_t aux_watermark = 0;
  uint16_t sample_max_stack = 0;
  uint32_t aux_sample_size = 0;
  uint64_t sig_data = 0;
  uint64_t config3 = 0;

  bool freq() const { return flags & (1u << 10); }
  bool sample_id_all() const { return flags & (1u << 18); }
  bool use_clockid() const { return flags & (1u << 25); }
  bool context_switch() const { return flags & (1u << 26); }
  bool exclude_user() const { return flags & (1u << 4); }
  bool exclude_kernel() const { return flags & (1u << 5); }
  bool exclude_hv() const { return flags & (1u << 6); }
};

// Decodes a perf_event_attr of `bytes.size()` bytes (any ABI version from 64 bytes on; fields the
// writer did not know stay 0). `offset` is where it sits in the file, for the error message.
Result<PerfEventAttr> ParseEventAttr(std::span<const uint8_t> bytes, uint64_t offset);

// One event of the file: its attr, the sample ids that name it, and its name when the file
// records one (event_desc feature), e.g. "intel_pt//" or "cycles".
struct PerfAttr {
  PerfEventAttr attr;
  std::vector<uint64_t> ids;
  std::string name;
};

class AttrSet {
 public:
  void Add(PerfAttr attr);
  const std::vector<PerfAttr>& attrs() const { return attrs_; }
  std::vector<PerfAttr>& mutable_attrs() { return attrs_; }
  bool empty() const { return attrs_.empty(); }

  // The attr a PERF_RECORD_SAMPLE body belongs to (null when there are no attrs or the sample's
  // id matches none). With one sample layout for all attrs, that layout's first attr.
  const PerfAttr* ForSample(std::span<const uint8_t> body) const;
  // The attr whose sample_id trailer ends a non-sample record body.
  const PerfAttr* ForNonSample(std::span<const uint8_t> body) const;
  const PerfAttr* ById(uint64_t id) const;

 private:
  std::vector<PerfAttr> attrs_;
};

}  // namespace ptprof::perf
