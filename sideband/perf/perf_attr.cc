#include "sideband/perf/perf_attr.h"

#include <fmt/format.h>

#include "sideband/perf/byte_cursor.h"
#include "sideband/perf/perf_abi.h"

namespace ptprof::perf {

namespace {

// Position (in u64 words) of the sample id in a sample body, counted from the start; -1 if none.
int SampleIdPosition(uint64_t sample_type) {
  if (sample_type & kSampleIdentifier) return 0;
  if (!(sample_type & kSampleId)) return -1;
  int pos = 0;
  if (sample_type & kSampleIp) ++pos;
  if (sample_type & kSampleTid) ++pos;
  if (sample_type & kSampleTime) ++pos;
  if (sample_type & kSampleAddr) ++pos;
  return pos;
}

// Position of the id in a sample_id trailer, counted in u64 words back from the end; 0 if none.
int TrailerIdPosition(uint64_t sample_type) {
  if (sample_type & kSampleIdentifier) return 1;
  if (!(sample_type & kSampleId)) return 0;
  int pos = 1;
  if (sample_type & kSampleCpu) ++pos;
  if (sample_type & kSampleStreamId) ++pos;
  return pos;
}

bool ReadWord(std::span<const uint8_t> body, size_t word, uint64_t& out) {
  if ((word + 1) * 8 > body.size()) return false;
  ByteCursor c(body.subspan(word * 8, 8));
  return c.Read(out);
}

}  // namespace

Result<PerfEventAttr> ParseEventAttr(std::span<const uint8_t> bytes, uint64_t offset) {
  if (bytes.size() < 64)
    return Fail(fmt::format("offset {:#x}: perf_event_attr of {} bytes is shorter than the oldest "
                            "ABI (64 bytes)", offset, bytes.size()));
  PerfEventAttr a;
  ByteCursor c(bytes, offset);
  uint16_t reserved16 = 0;
  uint32_t reserved32 = 0;
  // Each read stops quietly at the end of the attr: fields a smaller ABI lacks stay 0.
  (void)(c.Read(a.type) && c.Read(a.size) && c.Read(a.config) && c.Read(a.sample_period) &&
         c.Read(a.sample_type) && c.Read(a.read_format) && c.Read(a.flags) &&
         c.Read(a.wakeup_events) && c.Read(a.bp_type) && c.Read(a.config1) && c.Read(a.config2) &&
         c.Read(a.branch_sample_type) && c.Read(a.sample_regs_user) &&
         c.Read(a.sample_stack_user) && c.Read(a.clockid) && c.Read(a.sample_regs_intr) &&
         c.Read(a.aux_watermark) && c.Read(a.sample_max_stack) && c.Read(reserved16) &&
         c.Read(a.aux_sample_size) && c.Read(reserved32) && c.Read(a.sig_data) &&
         c.Read(a.config3));
  return a;
}

void AttrSet::Add(PerfAttr attr) { attrs_.push_back(std::move(attr)); }

const PerfAttr* AttrSet::ById(uint64_t id) const {
  for (const auto& a : attrs_)
    for (uint64_t i : a.ids)
      if (i == id) return &a;
  return nullptr;
}

const PerfAttr* AttrSet::ForSample(std::span<const uint8_t> body) const {
  if (attrs_.empty()) return nullptr;
  bool same_layout = true;
  for (const auto& a : attrs_)
    if (a.attr.sample_type != attrs_[0].attr.sample_type) same_layout = false;
  if (same_layout || attrs_.size() == 1) return &attrs_[0];
  int pos = SampleIdPosition(attrs_[0].attr.sample_type);
  uint64_t id = 0;
  if (pos < 0 || !ReadWord(body, static_cast<size_t>(pos), id)) return nullptr;
  return ById(id);
}

const PerfAttr* AttrSet::ForNonSample(std::span<const uint8_t> body) const {
  if (attrs_.empty()) return nullptr;
  bool same_layout = true;
  for (const auto& a : attrs_)
    if (a.attr.sample_type != attrs_[0].attr.sample_type ||
        a.attr.sample_id_all() != attrs_[0].attr.sample_id_all())
      same_layout = false;
  if (same_layout || attrs_.size() == 1) return &attrs_[0];
  int pos = TrailerIdPosition(attrs_[0].attr.sample_type);
  if (pos <= 0 || body.size() < static_cast<size_t>(pos) * 8) return nullptr;
  uint64_t id = 0;
  if (!ReadWord(body.subspan(body.size() - static_cast<size_t>(pos) * 8), 0, id)) return nullptr;
  return ById(id);
}

}  // namespace ptprof::perf
