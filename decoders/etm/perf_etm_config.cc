#include "decoders/etm/perf_etm_config.h"

namespace ptprof::etm {

Result<SourceConfig> SourceConfigFromPerf(const std::string& kind, int cpu,
                                          const std::vector<std::pair<std::string, uint64_t>>& params) {
  SourceConfig cfg;
  cfg.source = "cpu" + std::to_string(cpu);
  cfg.cpu = cpu;
  if (kind == "ETMv4") {
    cfg.protocol = Protocol::kEtmV4;
    cfg.arch = {ArchVersion::kV8, CoreProfile::kA};
  } else if (kind == "ETE") {
    cfg.protocol = Protocol::kEte;
    cfg.arch = {ArchVersion::kAA64, CoreProfile::kA};
  } else {
    return Fail("cpu " + std::to_string(cpu) + ": " + kind + " trace units are not supported (ETMv4 and ETE are)");
  }
  for (const auto& [name, value] : params) cfg.registers[name] = static_cast<uint32_t>(value);
  for (const char* required : {"TRCCONFIGR", "TRCTRACEIDR", "TRCIDR0", "TRCIDR1", "TRCIDR2"}) {
    if (!cfg.registers.count(required))
      return Fail("cpu " + std::to_string(cpu) + ": AUXTRACE_INFO has no " + required);
  }
  if (!cfg.registers.count("TRCIDR8")) cfg.registers["TRCIDR8"] = 0;
  if (cfg.protocol == Protocol::kEte && !cfg.registers.count("TRCDEVARCH"))
    cfg.registers["TRCDEVARCH"] = 0x47705A13;
  cfg.trace_id = cfg.Reg("TRCTRACEIDR") & 0x7f;
  return cfg;
}

}  // namespace ptprof::etm
