#pragma once
// PeventSource answers "which perf_event record of this sideband file comes next, and at which
// trace time does it apply?" for libipt-style sideband files (bare perf_event records, each with
// the sample_id fields that --pevent:sample-type names, as perf's sample_id_all trailer). The
// records are decoded up front by sideband/perf's record reader, so a damaged file fails at load
// with its name and offset instead of ending the sideband silently (as libipt does).
// No libipt types here.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "decoders/pt/pevent_options.h"
#include "sideband/perf/perf_record.h"
#include "src/model/result.h"

namespace ptprof::pt {

// One record as libipt-sb sees it.
struct PeventEntry {
  perf::PerfRecord record;  // sample_id cleared for record types libipt's pevent does not know
  uint64_t offset = 0;      // from the start of the loaded range (what libipt prints)
  bool has_time = false;    // the record carries a time sample
  uint64_t tsc = 0;         // its trace time (tsc-offset applied); 0 without a time sample
  std::optional<std::array<uint64_t, 3>> throttle;  // (UN)THROTTLE: time, id, stream_id
};

// Whether libipt's pevent reader knows record `type` (and so reads its samples).
bool IsPeventRecordType(uint32_t type);

// The trace time of perf time `time` under `config` (time conversion, then tsc-offset the way
// libipt applies it: never wrapping below 0 for positive offsets).
uint64_t PeventTsc(uint64_t time, const PeventConfig& config);

class PeventSource {
 public:
  // Reads and decodes `file`. Fails naming the file and the offset of a truncated or malformed
  // record, or an empty range.
  static Result<PeventSource> Load(const PeventFile& file);
  // Decodes records already in memory (`name` is the file name to report).
  static Result<PeventSource> FromBytes(const std::vector<uint8_t>& bytes, const std::string& name,
                                        const PeventFile& file);

  const std::string& filename() const { return filename_; }
  const PeventConfig& config() const { return config_; }
  bool primary() const { return primary_; }

  bool done() const { return next_ >= entries_.size(); }
  const PeventEntry& current() const { return entries_[next_]; }
  void Advance() { ++next_; }
  size_t size() const { return entries_.size(); }

 private:
  std::string filename_;
  PeventConfig config_;
  bool primary_ = true;
  std::vector<PeventEntry> entries_;
  size_t next_ = 0;
};

}  // namespace ptprof::pt
