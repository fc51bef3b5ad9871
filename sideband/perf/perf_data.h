#pragma once
// PerfData answers "what is in this perf.data?": its events (attrs, with PMU and event names), the
// feature sections, how many records of each type, the AUX trace streams (per CPU or per thread:
// which AUXTRACE buffers, where, how big), the PERF_RECORD_AUX notifications with their flags, the
// sideband events in time order (mmap, comm, fork, exit, switch, itrace_start), the time span and
// the clock conversion, and the decoded AUXTRACE_INFO. It is built in one pass over the
// PerfDataTokenizer's tokens. Records that cannot be decoded are counted and skipped (with the
// first few reasons); broken framing is an error naming the file and offset.
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "sideband/perf/perf_attr.h"
#include "sideband/shared_bytes.h"
#include "sideband/perf/perf_auxtrace_info.h"
#include "sideband/perf/perf_clock.h"
#include "sideband/perf/perf_features.h"
#include "sideband/perf/perf_record.h"
#include "src/model/result.h"

namespace ptprof::perf {

// One PERF_RECORD_AUXTRACE buffer of a stream.
struct AuxBuffer {
  uint64_t record_offset = 0;  // of the AUXTRACE record in the file
  uint64_t data_offset = 0;    // of its payload in the file
  uint64_t size = 0;
  uint64_t aux_offset = 0;     // position in the AUX area
  uint64_t reference = 0;
};

// The AUX data of one trace source: one CPU (per-cpu recording) or one thread (per-thread).
struct AuxStream {
  std::string name;  // "cpu3", "tid1234"
  uint32_t idx = 0;  // perf's mmap index
  std::optional<uint32_t> cpu;
  std::optional<uint32_t> tid;
  bool snapshot = false;
  std::vector<AuxBuffer> buffers;  // in file order
  uint64_t bytes = 0;
};

// One PERF_RECORD_AUX: the kernel's note that AUX data was written (and whether it was lost).
struct AuxNotice {
  uint64_t record_offset = 0;
  std::optional<uint64_t> time;
  std::optional<uint32_t> cpu;
  std::optional<uint32_t> tid;
  AuxRecord aux;
};

struct PerfDataOptions {
  bool keep_samples = false;  // keep every PERF_RECORD_SAMPLE (for LBR analyses); off: count only
};

struct PerfData {
  std::string name;  // the file, for messages
  bool pipe_mode = false;
  uint64_t file_size = 0;
  uint64_t data_offset = 0, data_size = 0;

  std::vector<PerfAttr> attrs;  // names filled from event_desc when present
  PerfFeatures features;

  std::map<uint32_t, uint64_t> record_counts;  // by record type
  uint64_t records = 0;
  uint64_t unknown_records = 0;  // types ptprof does not know at all
  uint64_t bad_records = 0;      // known types whose body did not decode
  std::vector<std::string> problems;  // the first few reasons for bad records / unreadable features

  std::vector<AuxStream> aux_streams;
  std::vector<AuxNotice> aux_notices;
  uint64_t aux_truncated = 0, aux_partial = 0, aux_collision = 0, aux_overwrite = 0;
  uint64_t aux_pmu_flags = 0;  // the PMU-specific flag bits seen (cs_etm 0x100: unformatted trace)
  uint64_t lost_events = 0;   // sum of PERF_RECORD_LOST.lost
  uint64_t lost_samples = 0;  // sum of PERF_RECORD_LOST_SAMPLES.lost

  std::vector<AuxtraceInfoRecord> auxtrace_info;
  std::optional<IntelPtInfo> intel_pt;
  std::optional<CsEtmInfo> cs_etm;
  std::optional<TimeConvRecord> time_conv;

  std::vector<PerfRecord> sideband;  // MMAP/MMAP2/COMM/FORK/EXIT/SWITCH*/ITRACE_START, by time
  std::vector<PerfSample> samples;   // only with PerfDataOptions::keep_samples
  std::vector<uint64_t> sample_offsets;  // parallel to samples: each record's offset in the file
  uint64_t sample_count = 0;
  std::vector<uint32_t> cpus;  // CPUs seen in sample ids, AUX streams and AUXTRACE records, sorted

  std::optional<uint64_t> first_time, last_time;  // perf clock ns over all records with a time

  SharedBytes bytes;  // the whole input, mapped (AUX payloads are read from here)

  // The TSC conversion from TIME_CONV, else from intel_pt's AUXTRACE_INFO.
  std::optional<PerfClock> clock() const;
  // "intel_pt", "cycles", ... for an attr: its event_desc name, else its PMU name.
  std::string PmuName(const PerfEventAttr& attr) const;
  // The attr of the AUX-area event (the one whose PMU is intel_pt/cs_etm/...), if any.
  const PerfAttr* AuxAttr() const;
  // The stream's bytes: its buffers concatenated in file order (a slice of `bytes`, no copy,
  // when the stream is one buffer).
  SharedBytes StreamBytes(const AuxStream& stream) const;
  const AuxStream* FindStream(const std::string& stream_name) const;
  // The event a sample or sample_id names by its id (IDENTIFIER/ID); null when it names none.
  // With a single event and no ids in the records, that event.
  const PerfAttr* AttrOf(const SampleId& id) const;
};

// Parses a perf.data held in memory (file or pipe mode). `name` names it in errors.
Result<PerfData> ParsePerfData(SharedBytes bytes, const std::string& name,
                               const PerfDataOptions& options = {});
inline Result<PerfData> ParsePerfData(std::vector<uint8_t> bytes, const std::string& name,
                                      const PerfDataOptions& options = {}) {
  return ParsePerfData(SharedBytes(std::move(bytes)), name, options);
}
// Maps (or, for a pipe, reads) and parses a perf.data file.
Result<PerfData> ReadPerfData(const std::string& path, const PerfDataOptions& options = {});

}  // namespace ptprof::perf
