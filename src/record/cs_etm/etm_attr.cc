#include "src/record/cs_etm/etm_attr.h"

#include <fmt/format.h>

#include "src/record/intel_pt/pt_attr.h"

namespace ptprof::record::hw {

namespace {
// The sink a bare recording uses: an ETR (system memory, large) if any, else the first.
std::string DefaultSink(const PmuSysfs& pmu) {
  for (const auto& [name, hash] : pmu.sinks)
    if (name.rfind("tmc_etr", 0) == 0) return name;
  return pmu.sinks.empty() ? std::string() : pmu.sinks.begin()->first;
}
}  // namespace

Result<EtmAttr> BuildEtmAttr(const PmuSysfs& pmu, const EtmOptions& options) {
  EtmAttr out;
  perf_event_attr& attr = out.attr.attr;
  attr.size = sizeof attr;
  attr.type = pmu.type;
  if (!options.user && !options.kernel)
    return Fail("cs_etm: nothing to trace: --no-user without --trace-kernel");
  attr.exclude_user = options.user ? 0 : 1;
  attr.exclude_kernel = options.kernel ? 0 : 1;
  attr.exclude_hv = 1;
  attr.disabled = 1;
  attr.enable_on_exec = 1;
  attr.sample_period = 1;
  SetSidebandBits(attr, options.per_cpu);

  out.sink = options.sink.empty() ? DefaultSink(pmu)
                                  : (options.sink[0] == '@' ? options.sink.substr(1) : options.sink);
  auto sink = pmu.sinks.find(out.sink);
  if (out.sink.empty() || sink == pmu.sinks.end()) {
    std::string names;
    for (const auto& [name, hash] : pmu.sinks) names += (names.empty() ? "" : ", ") + name;
    return Fail(fmt::format("{}/sinks/{}: no such sink (this system has: {})", pmu.dir,
                            out.sink.empty() ? "*" : out.sink, names.empty() ? "none" : names));
  }
  char* end = nullptr;
  out.sink_hash = std::strtoull(sink->second.c_str(), &end, 0);
  if (end == sink->second.c_str())
    return Fail(fmt::format("{}/sinks/{}: offset 0: not a number: '{}'", pmu.dir, out.sink,
                            sink->second));
  auto set = [&](const std::string& field, uint64_t value) {
    return SetFormatField(out.attr, pmu, field, value);
  };
  if (auto s = set("sinkid", out.sink_hash); !s) return tl::unexpected(s.error());
  if (options.timestamp)
    if (auto s = set("timestamp", 1); !s) return tl::unexpected(s.error());
  if (options.contextid) {
    // `contextid` says where this kernel keeps the pid (CONTEXTIDR_EL1 or _EL2); older kernels
    // only have it, newer ones also contextid1/contextid2.
    if (auto s = set("contextid", 1); !s) return tl::unexpected(s.error());
  }
  if (options.cc_threshold && !options.cycacc)
    return Fail("--cyc-threshold: cycle-count thresholds need cycle-accurate tracing (--cycacc)");
  if (options.cycacc) {
    if (auto s = set("cycacc", 1); !s) return tl::unexpected(s.error());
    if (options.cc_threshold)
      if (auto s = set("cc_threshold", *options.cc_threshold); !s) return tl::unexpected(s.error());
  }
  if (options.retstack)
    if (auto s = set("retstack", 1); !s) return tl::unexpected(s.error());
  if (options.branch_broadcast)
    if (auto s = set("branch_broadcast", 1); !s) return tl::unexpected(s.error());
  return out;
}

}  // namespace ptprof::record::hw
