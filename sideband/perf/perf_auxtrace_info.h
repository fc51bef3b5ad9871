#pragma once
// What PERF_RECORD_AUXTRACE_INFO says about how the AUX trace was recorded, decoded per AUX kind:
// for intel_pt the timing and packet-enable parameters a PT decoder needs (TSC conversion,
// TSC:CTC ratio, max non-turbo ratio, which config bits mean tsc/mtc/cyc/noretcomp, the address
// filter); for cs_etm the per-CPU trace unit registers (ETMv3, ETMv4, ETE). Also decodes an
// intel_pt attr.config into its named fields (the PMU's sysfs format).
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "sideband/perf/perf_record.h"
#include "src/model/result.h"

namespace ptprof::perf {

enum AuxtraceType : uint32_t {
  kAuxtraceUnknown = 0,
  kAuxtraceIntelPt = 1,
  kAuxtraceIntelBts = 2,
  kAuxtraceCsEtm = 3,
  kAuxtraceArmSpe = 4,
  kAuxtraceS390Cpumsf = 5,
  kAuxtraceHisiPtt = 6,
};

// "intel_pt", "cs_etm", ... or "auxtrace(N)".
std::string AuxtraceTypeName(uint32_t type);

struct IntelPtInfo {
  uint64_t pmu_type = 0;
  uint64_t time_shift = 0, time_mult = 0, time_zero = 0;
  bool cap_user_time_zero = false;
  uint64_t tsc_bit = 0, noretcomp_bit = 0, mtc_bit = 0, mtc_freq_bits = 0, cyc_bit = 0;
  uint64_t have_sched_switch = 0;
  bool snapshot_mode = false;
  bool per_cpu_mmaps = false;
  uint32_t tsc_ctc_ratio_n = 0;  // CPUID.15H EBX
  uint32_t tsc_ctc_ratio_d = 0;  // CPUID.15H EAX
  uint64_t max_non_turbo_ratio = 0;
  std::string filter;  // the address filter string, "" when none
};

struct CsEtmCpu {
  enum class Kind { kEtmV3, kEtmV4, kEte, kUnknown } kind = Kind::kUnknown;
  uint64_t magic = 0;
  uint64_t cpu = 0;
  std::vector<std::pair<std::string, uint64_t>> params;  // register name, value
};

struct CsEtmInfo {
  uint64_t header_version = 0;
  uint32_t pmu_type = 0;
  uint32_t nr_cpus = 0;
  bool snapshot = false;
  std::vector<CsEtmCpu> cpus;
};

const char* CsEtmKindName(CsEtmCpu::Kind kind);

Result<IntelPtInfo> DecodeIntelPtInfo(const AuxtraceInfoRecord& record);
Result<CsEtmInfo> DecodeCsEtmInfo(const AuxtraceInfoRecord& record);

// The named fields of an intel_pt attr.config: single bits as (name, 1) when set ("tsc", "mtc",
// "noretcomp", "branch", ...), multi-bit fields always ("mtc_period", "cyc_thresh", "psb_period").
// Bits that are set but have no name come last as ("config:N", 1).
std::vector<std::pair<std::string, uint64_t>> DecodeIntelPtConfig(uint64_t config);

}  // namespace ptprof::perf
