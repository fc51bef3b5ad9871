#pragma once
// PerfRecord answers "what does this perf event record say?": one typed struct per record kind
// ptprof uses (MMAP/MMAP2, COMM, FORK/EXIT, SWITCH, ITRACE_START, AUX, LOST, LOST_SAMPLES,
// AUXTRACE_INFO, AUXTRACE, TIME_CONV, AUX_OUTPUT_HW_ID, SAMPLE), decoded from the record's bytes and the attrs.
// Record kinds ptprof does not use decode to OtherRecord: counted by the caller, never an error.
// The same decoder reads bare record buffers without a perf.data header (libipt's pevent
// sideband files) through ParsePerfEventBuffer.
#include <cstdint>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "sideband/perf/perf_attr.h"
#include "sideband/perf/perf_sample.h"
#include "src/model/result.h"

namespace ptprof::perf {

struct RecordHeader {
  uint32_t type = 0;
  uint16_t misc = 0;
  uint16_t size = 0;  // the whole record including this header (AUXTRACE payloads come after it)
};

struct MmapRecord {
  bool mmap2 = false;
  uint32_t pid = 0, tid = 0;
  uint64_t addr = 0, len = 0, pgoff = 0;
  // MMAP2 only: either device/inode or (misc & kMiscMmapBuildId) a build id.
  uint32_t maj = 0, min = 0;
  uint64_t ino = 0, ino_generation = 0;
  std::vector<uint8_t> build_id;
  uint32_t prot = 0, flags = 0;
  std::string filename;
  bool executable = true;  // MMAP: !(misc & MMAP_DATA); MMAP2: prot has PROT_EXEC
};

struct CommRecord {
  uint32_t pid = 0, tid = 0;
  std::string comm;
  bool exec = false;
};

struct TaskRecord {  // FORK and EXIT
  bool fork = false;
  uint32_t pid = 0, ppid = 0, tid = 0, ptid = 0;
  uint64_t time = 0;
};

struct SwitchRecord {  // SWITCH and SWITCH_CPU_WIDE
  bool cpu_wide = false;
  bool out = false;
  bool preempt = false;
  uint32_t next_prev_pid = 0, next_prev_tid = 0;  // cpu-wide only
};

struct AuxRecord {
  uint64_t aux_offset = 0, aux_size = 0, flags = 0;
};

struct ItraceStartRecord {
  uint32_t pid = 0, tid = 0;
};

struct LostRecord {
  uint64_t id = 0, lost = 0;
};

struct LostSamplesRecord {
  uint64_t lost = 0;
};

struct AuxtraceInfoRecord {
  uint32_t type = 0;  // 1 intel_pt, 2 intel_bts, 3 cs_etm, 4 arm_spe, ...
  std::vector<uint64_t> priv;
};

struct AuxtraceRecord {
  uint64_t size = 0;       // payload bytes that follow the record
  uint64_t offset = 0;     // position of the payload in the AUX area
  uint64_t reference = 0;
  uint32_t idx = 0, tid = 0, cpu = 0;
  uint64_t payload_offset = 0;  // where the payload starts in the file/buffer
};

struct TimeConvRecord {
  uint64_t time_shift = 0, time_mult = 0, time_zero = 0;
  bool has_cycles = false;  // the longer form (perf 5.10+)
  uint64_t time_cycles = 0, time_mask = 0;
  bool cap_user_time_zero = false, cap_user_time_short = false;
};

// AUX_OUTPUT_HW_ID (Linux 5.16+): the hardware ID the AUX data of the CPU in the sample id is
// tagged with (for cs_etm the trace ID, allocated dynamically since Linux 6.4).
struct AuxOutputHwIdRecord {
  uint64_t hw_id = 0;
};

struct FinishedRoundRecord {};

struct OtherRecord {};  // a type ptprof does not decode (or does not know): counted, skipped

using RecordBody = std::variant<OtherRecord, MmapRecord, CommRecord, TaskRecord, SwitchRecord, AuxRecord,
                                ItraceStartRecord, LostRecord, LostSamplesRecord, AuxtraceInfoRecord,
                                AuxtraceRecord, TimeConvRecord, FinishedRoundRecord, AuxOutputHwIdRecord,
                                PerfSample>;

struct PerfRecord {
  RecordHeader header;
  uint64_t offset = 0;  // of the header, in the file/buffer
  SampleId sample_id;   // from the trailer (non-samples with sample_id_all) or the sample itself
  RecordBody body;
};

// Decodes one record. `body` is the bytes after the 8-byte header (header.size - 8 of them);
// `offset` is the header's offset. Fails, naming the offset and the field, when the body is too
// short for its type.
Result<PerfRecord> DecodeRecord(const RecordHeader& header, std::span<const uint8_t> body, uint64_t offset,
                                const AttrSet& attrs);

// Decodes a buffer of bare perf_event records (no perf.data header), as libipt's pevent
// sideband files hold them, with one attr describing their sample layout (sample_type and
// sample_id_all). `name` names the buffer in errors. Fails at the first malformed record.
Result<std::vector<PerfRecord>> ParsePerfEventBuffer(std::span<const uint8_t> bytes, const PerfEventAttr& attr,
                                                     const std::string& name);

}  // namespace ptprof::perf
