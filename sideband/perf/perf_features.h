#pragma once
// PerfFeatures answers "what did perf record about the machine and the session?": the feature
// sections of a perf.data file (or HEADER_FEATURE records of a pipe): host, kernel release, arch,
// CPU count and description, CPUID string, command line, build ids, PMU type names, the AUXTRACE
// buffer index, clock data and event names. Sections ptprof does not read are listed as present.
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "sideband/perf/perf_attr.h"
#include "src/model/result.h"

namespace ptprof::perf {

struct BuildIdEntry {
  int32_t pid = 0;
  uint16_t misc = 0;  // cpumode: kernel/user/guest
  std::string build_id;  // lower-case hex
  std::string filename;
};

struct AuxtraceIndexEntry {
  uint64_t file_offset = 0;  // of the PERF_RECORD_AUXTRACE record
  uint64_t size = 0;
};

struct EventDesc {
  PerfEventAttr attr;
  std::string name;
  std::vector<uint64_t> ids;
};

struct ClockData {
  uint32_t version = 0;
  uint32_t clockid = 0;
  uint64_t wall_clock_ns = 0;
  uint64_t clockid_time_ns = 0;
};

struct PerfFeatures {
  std::vector<int> present;  // feature ids found, in order
  std::string hostname, osrelease, version, arch, cpudesc, cpuid;
  std::optional<uint32_t> nr_cpus_available, nr_cpus_online;
  std::optional<uint64_t> total_mem_kb;
  std::vector<std::string> cmdline;
  std::vector<BuildIdEntry> build_ids;
  std::map<uint32_t, std::string> pmu_mappings;  // attr.type -> PMU name
  std::vector<AuxtraceIndexEntry> auxtrace_index;
  std::vector<EventDesc> event_desc;
  std::optional<uint64_t> clockid_res_ns;
  std::optional<ClockData> clock_data;
  std::optional<uint64_t> sample_time_first, sample_time_last;
  std::vector<std::string> problems;  // sections that could not be read (counted, not fatal)
};

// Decodes one feature section `bytes` with id `id` into `features`. `offset` is the section's
// file offset. Unknown ids are only listed. Fails (naming the feature and offset) on a section
// whose sizes do not fit; the caller decides whether that is fatal.
Status ParseFeatureSection(int id, std::span<const uint8_t> bytes, uint64_t offset, PerfFeatures& features);

// Decodes HEADER_BUILD_ID-style build_id records (the build_id feature's content, or the body of
// a pipe-mode PERF_RECORD_HEADER_BUILD_ID) into `out`.
Status ParseBuildIds(std::span<const uint8_t> bytes, uint64_t offset, std::vector<BuildIdEntry>& out);

}  // namespace ptprof::perf
