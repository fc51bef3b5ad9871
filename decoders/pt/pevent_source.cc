#include "decoders/pt/pevent_source.h"

#include <fmt/format.h>

#include "sideband/file_bytes.h"
#include "sideband/perf/byte_cursor.h"
#include "sideband/perf/perf_abi.h"

namespace ptprof::pt {

bool IsPeventRecordType(uint32_t type) {
  switch (type) {
    case perf::kRecordMmap:
    case perf::kRecordLost:
    case perf::kRecordComm:
    case perf::kRecordExit:
    case perf::kRecordThrottle:
    case perf::kRecordUnthrottle:
    case perf::kRecordFork:
    case perf::kRecordMmap2:
    case perf::kRecordAux:
    case perf::kRecordItraceStart:
    case perf::kRecordLostSamples:
    case perf::kRecordSwitch:
    case perf::kRecordSwitchCpuWide: return true;
    default: return false;
  }
}

uint64_t PeventTsc(uint64_t time, const PeventConfig& config) {
  const uint64_t tsc = config.clock.PerfTimeToTsc(time);
  const uint64_t offset = config.tsc_offset;
  if (offset <= tsc) return tsc - offset;
  // A positive offset larger than the time clamps at 0; a negative one (a huge unsigned value)
  // moves the record later.
  if (static_cast<int64_t>(offset) >= 0) return 0;
  return tsc - offset;
}

Result<PeventSource> PeventSource::Load(const PeventFile& file) {
  auto bytes = ReadFileRange(file.range.file, file.range.offset, file.range.size);
  if (!bytes) return tl::unexpected(bytes.error());
  return FromBytes(*bytes, file.range.file, file);
}

Result<PeventSource> PeventSource::FromBytes(const std::vector<uint8_t>& bytes, const std::string& name,
                                             const PeventFile& file) {
  if (bytes.empty()) return Fail(fmt::format("{}: offset {:#x}: no sideband records", name, file.range.offset));
  perf::PerfEventAttr attr;
  attr.sample_type = file.config.sample_type;
  attr.flags = uint64_t{1} << 18;  // sample_id_all: every record ends with the sample fields
  auto records = perf::ParsePerfEventBuffer(bytes, attr, name);
  if (!records) return tl::unexpected(records.error());

  PeventSource source;
  source.filename_ = name;
  source.config_ = file.config;
  source.primary_ = file.primary;
  for (perf::PerfRecord& record : *records) {
    PeventEntry entry;
    entry.offset = record.offset;
    const uint32_t type = record.header.type;
    // Our reader falls back to SAMPLE_IDENTIFIER for the id; libipt shows only what is sampled.
    if (!(file.config.sample_type & perf::kSampleId)) record.sample_id.id.reset();
    if (!IsPeventRecordType(type)) {
      record.sample_id = perf::SampleId{};  // libipt reads no samples of records it does not know
    } else if (record.sample_id.time) {
      entry.has_time = true;
      entry.tsc = PeventTsc(*record.sample_id.time, file.config);
    }
    if (type == perf::kRecordThrottle || type == perf::kRecordUnthrottle) {
      perf::ByteCursor c(std::span<const uint8_t>(bytes).subspan(record.offset + 8, record.header.size - 8u),
                         record.offset + 8);
      std::array<uint64_t, 3> words{};
      if (!(c.Read(words[0]) && c.Read(words[1]) && c.Read(words[2])))
        return Fail(fmt::format("{}: offset {:#x}: {} record of {} bytes is too short", name, record.offset,
                                perf::RecordTypeName(type), record.header.size));
      entry.throttle = words;
    }
    entry.record = std::move(record);
    source.entries_.push_back(std::move(entry));
  }
  return source;
}

}  // namespace ptprof::pt
