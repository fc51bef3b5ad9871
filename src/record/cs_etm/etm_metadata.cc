#include "src/record/cs_etm/etm_metadata.h"

#include <dirent.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <sstream>

#include <fmt/format.h>

namespace ptprof::record::hw {

namespace {

constexpr uint64_t kMagicEtmV4 = 0x4040404040404040ULL;
constexpr uint64_t kMagicEte = 0x5050505050505050ULL;

std::optional<std::string> ReadText(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// A register file (the kernel prints them as 0x-prefixed hex).
Result<uint64_t> ReadRegister(const std::string& path) {
  auto text = ReadText(path);
  if (!text) return Fail(path + ": cannot read it (no trace unit registers for this CPU)");
  const char* begin = text->c_str();
  char* end = nullptr;
  const uint64_t value = std::strtoull(begin, &end, 0);
  if (end == begin) return Fail(fmt::format("{}: offset 0: not a number: '{}'", path, *text));
  return value;
}

}  // namespace

uint64_t EtmConfigRegister(uint64_t c) {
  auto on = [&](unsigned bit) { return (c >> bit) & 1; };
  uint64_t r = 0;
  if (on(8)) r |= uint64_t{1} << 3;    // ETM_OPT_BRANCH_BROADCAST -> BB
  if (on(12)) r |= uint64_t{1} << 4;   // ETM_OPT_CYCACC -> CCI
  if (on(14)) r |= uint64_t{1} << 6;   // ETM_OPT_CTXTID -> CID
  if (on(15)) r |= (uint64_t{1} << 7) | (uint64_t{1} << 15);  // ETM_OPT_CTXTID2 -> VMID, VMIDOPT
  if (on(28)) r |= uint64_t{1} << 11;  // ETM_OPT_TS -> TS
  if (on(29)) r |= uint64_t{1} << 12;  // ETM_OPT_RETSTK -> RS
  return r;
}

std::vector<int> EtmCpus(const PmuSysfs& pmu) {
  std::vector<int> cpus;
  DIR* dir = opendir(pmu.dir.c_str());
  if (!dir) return cpus;
  while (const dirent* e = readdir(dir)) {
    const std::string name = e->d_name;
    if (name.size() < 4 || name.compare(0, 3, "cpu") != 0) continue;
    char* end = nullptr;
    const long n = std::strtol(name.c_str() + 3, &end, 10);
    if (*end == 0 && n >= 0) cpus.push_back(static_cast<int>(n));
  }
  closedir(dir);
  std::sort(cpus.begin(), cpus.end());
  return cpus;
}

Result<perf::CsEtmCpu> ReadEtmCpu(const PmuSysfs& pmu, int cpu, uint64_t trcconfigr,
                                  uint64_t trace_id) {
  const std::string base = fmt::format("{}/cpu{}", pmu.dir, cpu);
  perf::CsEtmCpu out;
  out.cpu = static_cast<uint64_t>(cpu);
  if (!ReadText(base + "/trcidr/trcidr0")) {
    if (ReadText(base + "/mgmt/etmidr"))
      return Fail(base + ": an ETMv3/PTM trace unit: ptprof records ETMv4 and ETE only");
    return Fail(base + "/trcidr/trcidr0: cannot read it (no ETMv4/ETE registers for this CPU)");
  }
  // ETE is an ETMv4 with TRCDEVARCH.ARCHVER (bits 15:12) of 5 or more.
  std::optional<uint64_t> devarch;
  if (ReadText(base + "/mgmt/trcdevarch")) {
    auto v = ReadRegister(base + "/mgmt/trcdevarch");
    if (!v) return tl::unexpected(v.error());
    devarch = *v;
  }
  const bool ete = devarch && ((*devarch >> 12) & 0xf) >= 5;
  out.kind = ete ? perf::CsEtmCpu::Kind::kEte : perf::CsEtmCpu::Kind::kEtmV4;
  out.magic = ete ? kMagicEte : kMagicEtmV4;
  out.params.emplace_back("TRCCONFIGR", trcconfigr);
  out.params.emplace_back("TRCTRACEIDR", trace_id);
  for (const char* name : {"trcidr0", "trcidr1", "trcidr2", "trcidr8"}) {
    auto v = ReadRegister(base + "/trcidr/" + name);
    if (!v) return tl::unexpected(v.error());
    std::string upper = name;
    for (char& ch : upper) ch = static_cast<char>(std::toupper(ch));
    out.params.emplace_back(upper, *v);
  }
  auto auth = ReadRegister(base + "/mgmt/trcauthstatus");
  if (!auth) return tl::unexpected(auth.error());
  out.params.emplace_back("TRCAUTHSTATUS", *auth);
  if (ete) out.params.emplace_back("TRCDEVARCH", *devarch);
  // ts_source (Linux 5.19+): which timestamp the unit uses; all ones when the kernel does not say.
  uint64_t ts_source = ~uint64_t{0};
  if (auto text = ReadText(base + "/ts_source")) {
    char* end = nullptr;
    const long long v = std::strtoll(text->c_str(), &end, 0);
    if (end == text->c_str())
      return Fail(fmt::format("{}/ts_source: offset 0: not a number: '{}'", base, *text));
    ts_source = static_cast<uint64_t>(v);
  }
  out.params.emplace_back("TS_SOURCE", ts_source);
  return out;
}

Result<perf::CsEtmInfo> BuildCsEtmInfo(const PmuSysfs& pmu, uint64_t attr_config, bool snapshot,
                                       const std::map<int, uint64_t>& trace_ids) {
  perf::CsEtmInfo info;
  info.header_version = 1;
  info.pmu_type = pmu.type;
  info.snapshot = snapshot;
  const std::vector<int> cpus = EtmCpus(pmu);
  if (cpus.empty())
    return Fail(pmu.dir + "/cpu*: no CPU has a trace unit listed (the ETM drivers are not bound)");
  const uint64_t config = EtmConfigRegister(attr_config);
  for (int cpu : cpus) {
    auto id = trace_ids.find(cpu);
    const uint64_t trace_id = id == trace_ids.end() ? LegacyEtmTraceId(cpu) : id->second;
    auto block = ReadEtmCpu(pmu, cpu, config, trace_id);
    if (!block) return tl::unexpected(block.error());
    info.cpus.push_back(std::move(*block));
  }
  info.nr_cpus = static_cast<uint32_t>(info.cpus.size());
  return info;
}

}  // namespace ptprof::record::hw
