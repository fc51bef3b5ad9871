#include "decoders/etm/source_config.h"

#include <cctype>

namespace ptprof::etm {

namespace {

struct RegisterRule {
  const char* name;
  bool required;
  uint32_t fallback;  // used when an optional register is absent
};

// Which registers each protocol needs (OpenCSD's decoder configurations), and the values assumed
// for optional ones when a snapshot omits them.
std::vector<RegisterRule> RulesFor(Protocol p) {
  switch (p) {
    case Protocol::kEtmV4:
      return {{"TRCCONFIGR", true, 0},  {"TRCTRACEIDR", true, 0}, {"TRCIDR0", true, 0},
              {"TRCIDR1", false, 0x4100F403}, {"TRCIDR2", true, 0}, {"TRCIDR8", false, 0},
              {"TRCIDR9", false, 0},    {"TRCIDR10", false, 0},   {"TRCIDR11", false, 0},
              {"TRCIDR12", false, 0},   {"TRCIDR13", false, 0}};
    case Protocol::kEte:
      return {{"TRCCONFIGR", true, 0}, {"TRCTRACEIDR", true, 0}, {"TRCIDR0", true, 0},
              {"TRCIDR1", false, 0x4100F403}, {"TRCIDR2", true, 0}, {"TRCIDR8", false, 0},
              {"TRCDEVARCH", false, 0x47705A13}};
    case Protocol::kEtmV3:
    case Protocol::kPtm:
      return {{"ETMIDR", true, 0}, {"ETMCR", true, 0}, {"ETMCCER", true, 0},
              {"ETMTRACEIDR", true, 0}};
    case Protocol::kStm:
      return {{"STMTCSR", true, 0}};
  }
  return {};
}

// "ETM4.2" -> ETMv4; the part after a '.' is a minor version the decoders do not need.
Result<Protocol> ProtocolOf(const SnapshotDevice& dev) {
  std::string base = dev.type.substr(0, dev.type.find('.'));
  if (base == "ETM4") return Protocol::kEtmV4;
  if (base == "ETE") return Protocol::kEte;
  if (base == "ETM3") return Protocol::kEtmV3;
  if (base == "PTM1" || base == "PFT1") return Protocol::kPtm;
  if (base == "STM") return Protocol::kStm;
  return Fail(dev.ini_file + ": [device] type: '" + dev.type +
              "' is not a trace protocol ptprof decodes (ETM3.x, PTM1.x, PFT1.x, ETM4.x, ETE, STM)");
}

int TrailingNumber(const std::string& name) {
  size_t i = name.size();
  while (i > 0 && std::isdigit(static_cast<unsigned char>(name[i - 1]))) --i;
  if (i == name.size()) return -1;
  return std::stoi(name.substr(i, 9));
}

std::string Upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

const char* ProtocolName(Protocol protocol) {
  switch (protocol) {
    case Protocol::kEtmV3: return "ETMv3";
    case Protocol::kPtm: return "PTM";
    case Protocol::kEtmV4: return "ETMv4";
    case Protocol::kEte: return "ETE";
    case Protocol::kStm: return "STM";
  }
  return "?";
}

ArchProfile ArchProfileOf(const std::string& core) {
  struct Known {
    const char* name;
    ArchVersion arch;
    CoreProfile profile;
  };
  using A = ArchVersion;
  using P = CoreProfile;
  static const Known kKnown[] = {
      {"Cortex-A78", A::kV8, P::kA},   {"Cortex-A77", A::kV8r3, P::kA}, {"Cortex-A76", A::kV8r3, P::kA},
      {"Cortex-A75", A::kV8r3, P::kA}, {"Cortex-A73", A::kV8, P::kA},   {"Cortex-A72", A::kV8, P::kA},
      {"Cortex-A65", A::kV8r3, P::kA}, {"Cortex-A57", A::kV8, P::kA},   {"Cortex-A55", A::kV8r3, P::kA},
      {"Cortex-A53", A::kV8, P::kA},   {"Cortex-A35", A::kV8, P::kA},   {"Cortex-A32", A::kV8, P::kA},
      {"Cortex-A17", A::kV7, P::kA},   {"Cortex-A15", A::kV7, P::kA},   {"Cortex-A12", A::kV7, P::kA},
      {"Cortex-A9", A::kV7, P::kA},    {"Cortex-A8", A::kV7, P::kA},    {"Cortex-A7", A::kV7, P::kA},
      {"Cortex-A5", A::kV7, P::kA},    {"Cortex-R52", A::kV8, P::kR},   {"Cortex-R8", A::kV7, P::kR},
      {"Cortex-R7", A::kV7, P::kR},    {"Cortex-R5", A::kV7, P::kR},    {"Cortex-R4", A::kV7, P::kR},
      {"Cortex-M33", A::kV8, P::kM},   {"Cortex-M23", A::kV8, P::kM},   {"Cortex-M0", A::kV7, P::kM},
      {"Cortex-M0+", A::kV7, P::kM},   {"Cortex-M3", A::kV7, P::kM},    {"Cortex-M4", A::kV7, P::kM},
  };
  for (const Known& k : kKnown)
    if (core == k.name) return {k.arch, k.profile};
  auto profile_letter = [](char c) {
    return c == 'A' ? P::kA : c == 'R' ? P::kR : c == 'M' ? P::kM : P::kUnknown;
  };
  // "ARMv<major>[.<minor>]-<profile>"
  if (core.rfind("ARMv", 0) == 0 && core.size() >= 7 && std::isdigit(static_cast<unsigned char>(core[4]))) {
    int major = core[4] - '0';
    int minor = 0;
    size_t dash = 5;
    if (core[5] == '.') {
      if (core.size() < 9 || !std::isdigit(static_cast<unsigned char>(core[6]))) return {};
      minor = core[6] - '0';
      dash = 7;
    }
    if (core.size() <= dash + 1 || core[dash] != '-') return {};
    P profile = profile_letter(core[dash + 1]);
    if (profile == P::kUnknown) return {};
    if (major == 7) return {A::kV7, profile};
    if (major == 8) return {minor < 3 ? A::kV8 : minor == 3 ? A::kV8r3 : A::kAA64, profile};
    if (major > 8) return {A::kAA64, profile};
    return {};
  }
  // "ARM-AA64[-<profile>]"
  if (core.rfind("ARM-AA64", 0) == 0 || core.rfind("ARM-aa64", 0) == 0) {
    P profile = P::kA;
    if (core.size() >= 10 && core[8] == '-') {
      if (core[9] == 'R') profile = P::kR;
      if (core[9] == 'M') profile = P::kM;
    }
    return {A::kAA64, profile};
  }
  return {};
}

uint32_t SourceConfig::Reg(const std::string& name) const {
  auto it = registers.find(name);
  return it == registers.end() ? 0 : it->second;
}

Result<SourceConfig> ConfigureSource(const Snapshot& snapshot, const std::string& source) {
  const SnapshotDevice* dev = snapshot.Device(source);
  if (!dev) return Fail(snapshot.dir + ": no device named '" + source + "'");
  auto protocol = ProtocolOf(*dev);
  if (!protocol) return tl::unexpected(protocol.error());
  SourceConfig cfg;
  cfg.source = source;
  cfg.protocol = *protocol;
  for (const RegisterRule& rule : RulesFor(cfg.protocol)) {
    const RegisterLine* line = dev->Register(rule.name);
    if (!line) {
      if (rule.required)
        return Fail(dev->ini_file + ": [regs] has no " + rule.name + " register (needed for " +
                    ProtocolName(cfg.protocol) + ")");
      cfg.registers[rule.name] = rule.fallback;
      continue;
    }
    auto value = ParseNumber(line->text, line->where, rule.name);
    if (!value) return tl::unexpected(value.error());
    if (*value > UINT32_MAX)
      return Fail(line->where + ": " + rule.name + ": '" + line->text + "' does not fit 32 bits");
    cfg.registers[Upper(rule.name)] = static_cast<uint32_t>(*value);
  }
  switch (cfg.protocol) {
    case Protocol::kEtmV4:
    case Protocol::kEte: cfg.trace_id = cfg.Reg("TRCTRACEIDR") & 0x7f; break;
    case Protocol::kEtmV3:
    case Protocol::kPtm: cfg.trace_id = cfg.Reg("ETMTRACEIDR") & 0x7f; break;
    case Protocol::kStm: cfg.trace_id = (cfg.Reg("STMTCSR") >> 16) & 0x7f; break;
  }
  if (cfg.protocol == Protocol::kStm) return cfg;
  cfg.core = snapshot.CoreOf(source);
  if (cfg.core.empty())
    return Fail(dev->ini_file + ": source '" + source +
                "' traces no core ([core_trace_sources] in the trace metadata names none)");
  const SnapshotDevice* core = snapshot.Device(cfg.core);
  if (!core)
    return Fail(snapshot.dir + ": [core_trace_sources] names core '" + cfg.core +
                "' but no device has that name");
  cfg.arch = ArchProfileOf(core->type);
  if (cfg.arch.arch == ArchVersion::kUnknown)
    return Fail(core->ini_file + ": [device] type: unknown core type '" + core->type +
                "' (expected Cortex-xx, ARMv<n>[.<m>]-<A|R|M> or ARM-AA64)");
  cfg.cpu = TrailingNumber(cfg.core);
  return cfg;
}

Result<BufferPlan> PlanBuffer(const Snapshot& snapshot, const std::string& buffer_name) {
  if (snapshot.buffers.empty()) return Fail(snapshot.dir + ": the snapshot has no trace buffer");
  const TraceBuffer* buffer = buffer_name.empty() ? &snapshot.buffers.front()
                                                  : snapshot.Buffer(buffer_name);
  if (!buffer) {
    std::string names;
    for (const TraceBuffer& b : snapshot.buffers) names += (names.empty() ? "" : ", ") + b.name;
    return Fail(snapshot.dir + ": no trace buffer named '" + buffer_name + "' (there are: " + names + ")");
  }
  BufferPlan plan;
  plan.buffer = *buffer;
  for (const std::string& source : snapshot.SourcesOf(buffer->name)) {
    const SnapshotDevice* dev = snapshot.Device(source);
    if (dev && dev->type.rfind("ITM", 0) == 0) {
      plan.skipped.push_back(source + ": ITM is not decoded");
      continue;
    }
    auto cfg = ConfigureSource(snapshot, source);
    if (!cfg) return tl::unexpected(cfg.error());
    plan.sources.push_back(std::move(*cfg));
    if (buffer->format == "source_data") break;  // an unformatted buffer carries one source
  }
  if (plan.sources.empty())
    return Fail(buffer->where + ": no source that ptprof can decode writes into buffer '" +
                buffer->name + "'");
  return plan;
}

}  // namespace ptprof::etm
