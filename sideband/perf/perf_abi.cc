#include "sideband/perf/perf_abi.h"

#include <array>
#include <cstdio>
#include <utility>

namespace ptprof::perf {

namespace {

const char* KnownRecordName(uint32_t type) {
  switch (type) {
    case kRecordMmap: return "MMAP";
    case kRecordLost: return "LOST";
    case kRecordComm: return "COMM";
    case kRecordExit: return "EXIT";
    case kRecordThrottle: return "THROTTLE";
    case kRecordUnthrottle: return "UNTHROTTLE";
    case kRecordFork: return "FORK";
    case kRecordRead: return "READ";
    case kRecordSample: return "SAMPLE";
    case kRecordMmap2: return "MMAP2";
    case kRecordAux: return "AUX";
    case kRecordItraceStart: return "ITRACE_START";
    case kRecordLostSamples: return "LOST_SAMPLES";
    case kRecordSwitch: return "SWITCH";
    case kRecordSwitchCpuWide: return "SWITCH_CPU_WIDE";
    case kRecordNamespaces: return "NAMESPACES";
    case kRecordKsymbol: return "KSYMBOL";
    case kRecordBpfEvent: return "BPF_EVENT";
    case kRecordCgroup: return "CGROUP";
    case kRecordTextPoke: return "TEXT_POKE";
    case kRecordAuxOutputHwId: return "AUX_OUTPUT_HW_ID";
    case kRecordHeaderAttr: return "HEADER_ATTR";
    case kRecordHeaderEventType: return "HEADER_EVENT_TYPE";
    case kRecordHeaderTracingData: return "HEADER_TRACING_DATA";
    case kRecordHeaderBuildId: return "HEADER_BUILD_ID";
    case kRecordFinishedRound: return "FINISHED_ROUND";
    case kRecordIdIndex: return "ID_INDEX";
    case kRecordAuxtraceInfo: return "AUXTRACE_INFO";
    case kRecordAuxtrace: return "AUXTRACE";
    case kRecordAuxtraceError: return "AUXTRACE_ERROR";
    case kRecordThreadMap: return "THREAD_MAP";
    case kRecordCpuMap: return "CPU_MAP";
    case kRecordStatConfig: return "STAT_CONFIG";
    case kRecordStat: return "STAT";
    case kRecordStatRound: return "STAT_ROUND";
    case kRecordEventUpdate: return "EVENT_UPDATE";
    case kRecordTimeConv: return "TIME_CONV";
    case kRecordHeaderFeature: return "HEADER_FEATURE";
    case kRecordCompressed: return "COMPRESSED";
    case kRecordFinishedInit: return "FINISHED_INIT";
    case kRecordCompressed2: return "COMPRESSED2";
    default: return nullptr;
  }
}

}  // namespace

bool IsKnownRecordType(uint32_t type) { return KnownRecordName(type) != nullptr; }

std::string RecordTypeName(uint32_t type) {
  const char* name = KnownRecordName(type);
  if (name) return std::string("PERF_RECORD_") + name;
  return "PERF_RECORD_UNKNOWN(" + std::to_string(type) + ")";
}

std::string FeatureName(int id) {
  static constexpr std::array<const char*, 32> kNames = {
      "reserved",    "tracing_data", "build_id",    "hostname",        "osrelease",    "version",
      "arch",        "nrcpus",       "cpudesc",     "cpuid",           "total_mem",    "cmdline",
      "event_desc",  "cpu_topology", "numa_topology", "branch_stack",  "pmu_mappings", "group_desc",
      "auxtrace",    "stat",         "cache",       "sample_time",     "mem_topology", "clockid",
      "dir_format",  "bpf_prog_info", "bpf_btf",    "compressed",      "cpu_pmu_caps", "clock_data",
      "hybrid_topology", "pmu_caps"};
  if (id >= 0 && id < static_cast<int>(kNames.size())) return kNames[static_cast<size_t>(id)];
  return "feature(" + std::to_string(id) + ")";
}

std::string SampleTypeNames(uint64_t sample_type) {
  static constexpr std::array<const char*, 25> kNames = {
      "IP",        "TID",         "TIME",        "ADDR",      "READ",           "CALLCHAIN",
      "ID",        "CPU",         "PERIOD",      "STREAM_ID", "RAW",            "BRANCH_STACK",
      "REGS_USER", "STACK_USER",  "WEIGHT",      "DATA_SRC",  "IDENTIFIER",     "TRANSACTION",
      "REGS_INTR", "PHYS_ADDR",   "AUX",         "CGROUP",    "DATA_PAGE_SIZE", "CODE_PAGE_SIZE",
      "WEIGHT_STRUCT"};
  std::string out;
  for (unsigned bit = 0; bit < 64; ++bit) {
    if (!(sample_type & (uint64_t{1} << bit))) continue;
    if (!out.empty()) out += '|';
    out += bit < kNames.size() ? std::string(kNames[bit]) : "bit" + std::to_string(bit);
  }
  return out;
}

std::string AuxFlagNames(uint64_t flags) {
  static constexpr std::pair<uint64_t, const char*> kFlags[] = {{kAuxFlagTruncated, "truncated"},
                                                                {kAuxFlagOverwrite, "overwrite"},
                                                                {kAuxFlagPartial, "partial"},
                                                                {kAuxFlagCollision, "collision"}};
  std::string out;
  auto add = [&](const std::string& name) {
    if (!out.empty()) out += '|';
    out += name;
  };
  for (const auto& [bit, name] : kFlags)
    if (flags & bit) add(name);
  if (flags & kAuxFlagPmuFormatMask) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "pmu_format=0x%llx",
                  static_cast<unsigned long long>(flags & kAuxFlagPmuFormatMask));
    add(buf);
  }
  uint64_t other = flags & ~(0xfull | kAuxFlagPmuFormatMask);
  if (other) add("other=0x" + [&] {
    char buf[24];
    std::snprintf(buf, sizeof buf, "%llx", static_cast<unsigned long long>(other));
    return std::string(buf);
  }());
  return out;
}

std::string GenericPmuName(uint32_t type) {
  switch (type) {
    case 0: return "hardware";
    case 1: return "software";
    case 2: return "tracepoint";
    case 3: return "hw_cache";
    case 4: return "raw";
    case 5: return "breakpoint";
    default: return "";
  }
}

}  // namespace ptprof::perf
