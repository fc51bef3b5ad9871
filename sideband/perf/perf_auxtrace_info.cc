#include "sideband/perf/perf_auxtrace_info.h"

#include <array>

#include <fmt/format.h>

namespace ptprof::perf {

namespace {

constexpr uint64_t kMagicEtmV3 = 0x3030303030303030ULL;
constexpr uint64_t kMagicEtmV4 = 0x4040404040404040ULL;
constexpr uint64_t kMagicEte = 0x5050505050505050ULL;

// intel_pt private words, in order.
enum IntelPtPriv {
  kPtPmuType, kPtTimeShift, kPtTimeMult, kPtTimeZero, kPtCapUserTimeZero, kPtTscBit, kPtNoRetCompBit,
  kPtHaveSchedSwitch, kPtSnapshotMode, kPtPerCpuMmaps, kPtMtcBit, kPtMtcFreqBits, kPtTscCtcN, kPtTscCtcD,
  kPtCycBit, kPtMaxNonTurboRatio, kPtFilterStrLen, kPtPrivWords
};

// Register names of each trace unit kind, in the order perf writes them.
const std::vector<const char*>& ParamNames(CsEtmCpu::Kind kind) {
  static const std::vector<const char*> kV3 = {"ETMCR", "ETMTRACEIDR", "ETMCCER", "ETMIDR", "TS_SOURCE"};
  static const std::vector<const char*> kV4 = {"TRCCONFIGR", "TRCTRACEIDR", "TRCIDR0",      "TRCIDR1",
                                               "TRCIDR2",    "TRCIDR8",     "TRCAUTHSTATUS", "TS_SOURCE"};
  static const std::vector<const char*> kEte = {"TRCCONFIGR", "TRCTRACEIDR",   "TRCIDR0",    "TRCIDR1", "TRCIDR2",
                                                "TRCIDR8",    "TRCAUTHSTATUS", "TRCDEVARCH", "TS_SOURCE"};
  static const std::vector<const char*> kNone;
  switch (kind) {
    case CsEtmCpu::Kind::kEtmV3: return kV3;
    case CsEtmCpu::Kind::kEtmV4: return kV4;
    case CsEtmCpu::Kind::kEte: return kEte;
    default: return kNone;
  }
}

}  // namespace

std::string AuxtraceTypeName(uint32_t type) {
  switch (type) {
    case kAuxtraceIntelPt: return "intel_pt";
    case kAuxtraceIntelBts: return "intel_bts";
    case kAuxtraceCsEtm: return "cs_etm";
    case kAuxtraceArmSpe: return "arm_spe";
    case kAuxtraceS390Cpumsf: return "s390_cpumsf";
    case kAuxtraceHisiPtt: return "hisi_ptt";
    default: return "auxtrace(" + std::to_string(type) + ")";
  }
}

const char* CsEtmKindName(CsEtmCpu::Kind kind) {
  switch (kind) {
    case CsEtmCpu::Kind::kEtmV3: return "ETMv3/PTM";
    case CsEtmCpu::Kind::kEtmV4: return "ETMv4";
    case CsEtmCpu::Kind::kEte: return "ETE";
    default: return "unknown";
  }
}

Result<IntelPtInfo> DecodeIntelPtInfo(const AuxtraceInfoRecord& r) {
  const auto& p = r.priv;
  if (r.type != kAuxtraceIntelPt) return Fail("AUXTRACE_INFO is " + AuxtraceTypeName(r.type) + ", not intel_pt");
  if (p.size() < kPtPrivWords)
    return Fail(fmt::format("intel_pt AUXTRACE_INFO has {} private words, expected at least {}", p.size(),
                            static_cast<int>(kPtPrivWords)));
  IntelPtInfo i;
  i.pmu_type = p[kPtPmuType];
  i.time_shift = p[kPtTimeShift];
  i.time_mult = p[kPtTimeMult];
  i.time_zero = p[kPtTimeZero];
  i.cap_user_time_zero = p[kPtCapUserTimeZero];
  i.tsc_bit = p[kPtTscBit];
  i.noretcomp_bit = p[kPtNoRetCompBit];
  i.have_sched_switch = p[kPtHaveSchedSwitch];
  i.snapshot_mode = p[kPtSnapshotMode];
  i.per_cpu_mmaps = p[kPtPerCpuMmaps];
  i.mtc_bit = p[kPtMtcBit];
  i.mtc_freq_bits = p[kPtMtcFreqBits];
  i.tsc_ctc_ratio_n = static_cast<uint32_t>(p[kPtTscCtcN]);
  i.tsc_ctc_ratio_d = static_cast<uint32_t>(p[kPtTscCtcD]);
  i.cyc_bit = p[kPtCycBit];
  i.max_non_turbo_ratio = p[kPtMaxNonTurboRatio];
  uint64_t len = p[kPtFilterStrLen];
  size_t words_left = p.size() - kPtPrivWords;
  if (len > words_left * 8)
    return Fail(fmt::format("intel_pt AUXTRACE_INFO filter string of {} bytes runs past the record ({} bytes left)",
                            len, words_left * 8));
  for (uint64_t k = 0; k < len; ++k) {
    char ch = static_cast<char>(p[kPtPrivWords + k / 8] >> (8 * (k % 8)));
    if (ch == 0) break;
    i.filter.push_back(ch);
  }
  return i;
}

Result<CsEtmInfo> DecodeCsEtmInfo(const AuxtraceInfoRecord& r) {
  const auto& p = r.priv;
  if (r.type != kAuxtraceCsEtm) return Fail("AUXTRACE_INFO is " + AuxtraceTypeName(r.type) + ", not cs_etm");
  if (p.size() < 3) return Fail(fmt::format("cs_etm AUXTRACE_INFO has {} private words, expected at least 3", p.size()));
  CsEtmInfo info;
  info.header_version = p[0];
  info.pmu_type = static_cast<uint32_t>(p[1] >> 32);
  info.nr_cpus = static_cast<uint32_t>(p[1]);
  info.snapshot = p[2];
  if (info.header_version > 2)
    return Fail(fmt::format("cs_etm AUXTRACE_INFO header version {} is not known (0..2 are)", info.header_version));
  size_t pos = 3;
  for (uint32_t n = 0; n < info.nr_cpus; ++n) {
    if (pos + 2 > p.size())
      return Fail(fmt::format("cs_etm AUXTRACE_INFO: the block of CPU #{} (word {}) runs past the record", n, pos));
    CsEtmCpu cpu;
    cpu.magic = p[pos];
    cpu.cpu = p[pos + 1];
    cpu.kind = cpu.magic == kMagicEtmV3 ? CsEtmCpu::Kind::kEtmV3
               : cpu.magic == kMagicEtmV4 ? CsEtmCpu::Kind::kEtmV4
               : cpu.magic == kMagicEte   ? CsEtmCpu::Kind::kEte
                                          : CsEtmCpu::Kind::kUnknown;
    if (cpu.kind == CsEtmCpu::Kind::kUnknown)
      return Fail(fmt::format("cs_etm AUXTRACE_INFO: word {} has magic {:#x}, not ETMv3/ETMv4/ETE", pos, cpu.magic));
    const auto& names = ParamNames(cpu.kind);
    uint64_t nr_params = 0;
    if (info.header_version == 0) {  // fixed layouts without the TS_SOURCE word
      nr_params = names.size() - 1;
      pos += 2;
    } else {
      if (pos + 3 > p.size())
        return Fail(fmt::format("cs_etm AUXTRACE_INFO: the block of CPU #{} (word {}) runs past the record", n, pos));
      nr_params = p[pos + 2];
      pos += 3;
    }
    if (nr_params > p.size() - pos)
      return Fail(fmt::format("cs_etm AUXTRACE_INFO: CPU {} has {} parameters but {} words remain", cpu.cpu, nr_params,
                              p.size() - pos));
    for (uint64_t k = 0; k < nr_params; ++k)
      cpu.params.emplace_back(k < names.size() ? std::string(names[k]) : fmt::format("param{}", k), p[pos + k]);
    pos += nr_params;
    info.cpus.push_back(std::move(cpu));
  }
  return info;
}

std::vector<std::pair<std::string, uint64_t>> DecodeIntelPtConfig(uint64_t config) {
  struct Field {
    const char* name;
    unsigned lo, hi;
  };
  static constexpr std::array<Field, 14> kFields = {{{"pt", 0, 0},
                                                     {"cyc", 1, 1},
                                                     {"pwr_evt", 4, 4},
                                                     {"fup_on_ptw", 5, 5},
                                                     {"mtc", 9, 9},
                                                     {"tsc", 10, 10},
                                                     {"noretcomp", 11, 11},
                                                     {"ptw", 12, 12},
                                                     {"branch", 13, 13},
                                                     {"mtc_period", 14, 17},
                                                     {"cyc_thresh", 19, 22},
                                                     {"psb_period", 24, 27},
                                                     {"event", 31, 31},
                                                     {"notnt", 55, 55}}};
  std::vector<std::pair<std::string, uint64_t>> out;
  uint64_t named = 0;
  for (const auto& f : kFields) {
    uint64_t mask = ((uint64_t{1} << (f.hi - f.lo + 1)) - 1) << f.lo;
    named |= mask;
    uint64_t value = (config & mask) >> f.lo;
    if (f.lo == f.hi && value == 0) continue;
    out.emplace_back(f.name, value);
  }
  for (unsigned bit = 0; bit < 64; ++bit)
    if ((config & ~named) & (uint64_t{1} << bit)) out.emplace_back(fmt::format("config:{}", bit), 1);
  return out;
}

}  // namespace ptprof::perf
