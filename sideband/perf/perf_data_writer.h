#pragma once
// PerfDataWriter answers "what perf.data would `perf record -e intel_pt//` (or `-e cs_etm//`)
// have written for this trace?": it lays out a file-mode perf.data (header, one AUX event attr
// with its sample id, records, feature sections) from a plain description of the trace: the AUX
// streams' bytes, the threads that ran them with their code mappings, the trace configuration
// (attr.config and the AUXTRACE_INFO private words: intel_pt's timing parameters, or cs_etm's
// per-CPU trace unit registers) and the machine description perf's decoder reads (cpuid, arch,
// pmu_mappings, build ids). The layouts are the reader's (perf_abi.h, perf_record.h,
// perf_auxtrace_info.h); the file is what Linux perf 6.1 reads and decodes with `perf script`.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "sideband/perf/perf_auxtrace_info.h"
#include "sideband/perf/perf_features.h"
#include "src/model/result.h"

namespace ptprof::perf {

// Bit positions of the intel_pt PMU's attr.config fields (its sysfs `format` directory, the same
// names DecodeIntelPtConfig prints).
struct IntelPtConfigBits {
  static constexpr unsigned kCyc = 1;
  static constexpr unsigned kMtc = 9;
  static constexpr unsigned kTsc = 10;
  static constexpr unsigned kNoRetComp = 11;
  static constexpr unsigned kBranch = 13;
  static constexpr unsigned kMtcPeriod = 14;  // 4 bits
  static constexpr unsigned kCycThresh = 19;  // 4 bits
  static constexpr unsigned kPsbPeriod = 24;  // 4 bits
};

// The PMU type the export declares for intel_pt (what the kernel usually assigns it).
inline constexpr uint32_t kExportIntelPtPmuType = 8;

// One executable mapping of a thread (an MMAP2 record).
struct PerfMapping {
  uint64_t address = 0;
  uint64_t length = 0;
  uint64_t pgoff = 0;  // file offset of `address`
  std::string filename;
};

// A thread that ran traced code: COMM, its MMAP2s, ITRACE_START and EXIT records.
struct PerfThread {
  int32_t pid = 0;
  int32_t tid = 0;
  int32_t cpu = 0;
  std::string comm;
  std::vector<PerfMapping> mappings;
};

// One AUX buffer (an AUXTRACE record and its payload, announced by an AUX record).
struct PerfAuxBuffer {
  uint32_t idx = 0;  // perf's per-mmap index: one queue per index
  int32_t tid = 0;
  int32_t cpu = 0;
  std::span<const uint8_t> bytes;
};

struct PerfDataDescription {
  uint32_t auxtrace_type = kAuxtraceIntelPt;  // or kAuxtraceCsEtm
  uint64_t config = 0;    // the AUX event's attr.config
  IntelPtInfo pt_info;    // intel_pt's AUXTRACE_INFO (pmu_type is also the attr type)
  CsEtmInfo etm_info;     // cs_etm's AUXTRACE_INFO (pmu_type is also the attr type)
  uint64_t config2 = 0;   // cs_etm: the sink's hash
  // PERF_SAMPLE_TIME in the attr and the records' sample ids. perf's cs_etm decoder decodes by
  // time when it is set and then needs timestamp packets, so perf leaves it out of per-thread
  // cs_etm recordings without them (timeless decoding).
  bool sample_time = true;
  // Records the kernel wrote to the AUX events' sideband rings (SWITCH, FORK, COMM, MMAP2, LOST,
  // ...), concatenated, each with a sample_id trailer in this file's layout (TID, TIME when
  // sample_time, CPU, IDENTIFIER): written after the threads' synthesized records, with the
  // IDENTIFIER set to this file's event id.
  std::vector<uint8_t> kernel_records;
  uint64_t start_time = 0, end_time = 0;  // perf time of the first and after the last event
  std::vector<PerfThread> threads;
  std::vector<PerfAuxBuffer> buffers;
  std::vector<BuildIdEntry> build_ids;
  std::string hostname, osrelease, version = "6.1", arch = "x86_64", cpuid, cpudesc;
  uint32_t nr_cpus = 1;
  std::vector<std::string> cmdline;
};

// The whole file as bytes. Fails only on a description perf cannot represent (a file name or
// string longer than a record can hold, a buffer without a thread).
Result<std::vector<uint8_t>> SerializePerfData(const PerfDataDescription& description);

// Writes the file through a temporary file in the same directory and a rename; an existing
// `path` is replaced only with `force`. Errors name `path`.
Status WritePerfDataFile(const PerfDataDescription& description, const std::string& path, bool force);

}  // namespace ptprof::perf
