#include "src/record/intel_pt/pt_attr.h"

#include <fmt/format.h>

namespace ptprof::record::hw {

namespace {

bool ParseNumber(const std::string& text, uint64_t* value) {
  if (text.empty()) return false;
  char* end = nullptr;
  const bool hex = text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X');
  *value = std::strtoull(text.c_str(), &end, hex ? 16 : 10);
  return end && *end == '\0' && text[0] != '-';
}

const char* ActionName(AddressFilter::Action action) {
  switch (action) {
    case AddressFilter::Action::kStart: return "start";
    case AddressFilter::Action::kStop: return "stop";
    case AddressFilter::Action::kTraceStop: return "tracestop";
    default: return "filter";
  }
}

// The value N is allowed by the caps bitmap `cap` (bit N set).
Status CheckBitmap(const PmuSysfs& pmu, const std::string& cap, uint64_t n, const std::string& opt) {
  if (pmu.caps.count(cap) == 0) return {};  // older kernels: no list, the PMU checks itself
  const uint64_t bitmap = pmu.CapHex(cap);
  if (n < 64 && ((bitmap >> n) & 1)) return {};
  std::string allowed;
  for (unsigned i = 0; i < 64; ++i)
    if ((bitmap >> i) & 1) allowed += (allowed.empty() ? "" : ",") + std::to_string(i);
  return Fail(fmt::format("{} {}: {}/caps/{} is {:#x}: this CPU allows {}", opt, n, pmu.dir, cap,
                          bitmap, allowed.empty() ? "none" : allowed));
}

}  // namespace

Result<std::vector<AddressFilter>> ParseAddressFilters(const std::string& text) {
  std::vector<AddressFilter> filters;
  size_t at = 0;
  while (at < text.size()) {
    while (at < text.size() && (text[at] == ' ' || text[at] == ',')) ++at;
    if (at >= text.size()) break;
    size_t end = text.find(',', at);
    if (end == std::string::npos) end = text.size();
    const std::string item = text.substr(at, end - at);
    const size_t space = item.find(' ');
    if (space == std::string::npos)
      return Fail(fmt::format("--filter '{}': offset {}: expected ACTION ADDR[/SIZE][@FILE]", text,
                              at));
    const std::string action = item.substr(0, space);
    AddressFilter f;
    if (action == "filter") f.action = AddressFilter::Action::kFilter;
    else if (action == "start") f.action = AddressFilter::Action::kStart;
    else if (action == "stop") f.action = AddressFilter::Action::kStop;
    else if (action == "tracestop") f.action = AddressFilter::Action::kTraceStop;
    else
      return Fail(fmt::format("--filter '{}': offset {}: unknown action '{}' (filter, start, stop, "
                              "tracestop)", text, at, action));
    std::string spec = item.substr(space + 1);
    while (!spec.empty() && spec.back() == ' ') spec.pop_back();
    const size_t spec_at = at + space + 1;
    if (size_t file = spec.find('@'); file != std::string::npos) {
      f.file = spec.substr(file + 1);
      spec.resize(file);
      if (f.file.empty())
        return Fail(fmt::format("--filter '{}': offset {}: empty file after '@'", text,
                                spec_at + file + 1));
    }
    std::string size;
    if (size_t slash = spec.find('/'); slash != std::string::npos) {
      size = spec.substr(slash + 1);
      spec.resize(slash);
    }
    if (!ParseNumber(spec, &f.start))
      return Fail(fmt::format("--filter '{}': offset {}: '{}' is not an address (symbols: look "
                              "them up with nm and give the address)", text, spec_at, spec));
    const bool range = f.action == AddressFilter::Action::kFilter ||
                       f.action == AddressFilter::Action::kTraceStop;
    if (!size.empty() && !ParseNumber(size, &f.size))
      return Fail(fmt::format("--filter '{}': offset {}: '{}' is not a size", text,
                              spec_at + spec.size() + 1, size));
    if (range && f.size == 0)
      return Fail(fmt::format("--filter '{}': offset {}: {} needs a size (ADDR/SIZE)", text, at,
                              action));
    if (!range && f.size != 0)
      return Fail(fmt::format("--filter '{}': offset {}: {} takes a single address, no size", text,
                              at, action));
    if (f.size != 0 && f.start + f.size < f.start)
      return Fail(fmt::format("--filter '{}': offset {}: the range wraps past 2^64", text, spec_at));
    filters.push_back(f);
    at = end + 1;
  }
  return filters;
}

std::string FormatAddressFilters(const std::vector<AddressFilter>& filters) {
  std::string text;
  for (const AddressFilter& f : filters) {
    if (!text.empty()) text += ",";
    text += fmt::format("{} {:#x}", ActionName(f.action), f.start);
    if (f.size) text += fmt::format("/{:#x}", f.size);
    if (!f.file.empty()) text += "@" + f.file;
  }
  return text;
}

void SetSidebandBits(perf_event_attr& attr, bool per_cpu) {
  attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU |
                     PERF_SAMPLE_IDENTIFIER;
  attr.sample_id_all = 1;
  attr.mmap = 1;
  attr.mmap2 = 1;
  attr.comm = 1;
  attr.comm_exec = 1;
  attr.task = 1;
  attr.context_switch = 1;
  attr.inherit = per_cpu ? 1 : 0;
}

Result<HwAttr> BuildIntelPtAttr(const PmuSysfs& pmu, const IntelPtOptions& options) {
  HwAttr out;
  perf_event_attr& attr = out.attr;
  attr.size = sizeof attr;
  attr.type = pmu.type;
  if (!options.user && !options.kernel)
    return Fail("intel_pt: nothing to trace: --no-user without --trace-kernel");
  attr.exclude_user = options.user ? 0 : 1;
  attr.exclude_kernel = options.kernel ? 0 : 1;
  attr.exclude_hv = 1;
  attr.disabled = 1;
  attr.enable_on_exec = 1;
  attr.sample_period = 1;
  SetSidebandBits(attr, options.per_cpu);

  auto set = [&](const std::string& field, uint64_t value) { return SetFormatField(out, pmu, field, value); };
  if (auto s = set("pt", 1); !s) return tl::unexpected(s.error());
  if (auto s = set("branch", options.branch ? 1 : 0); !s) return tl::unexpected(s.error());
  if (!options.no_tsc)
    if (auto s = set("tsc", 1); !s) return tl::unexpected(s.error());
  if (options.no_retcomp)
    if (auto s = set("noretcomp", 1); !s) return tl::unexpected(s.error());

  // MTC: on by default where the CPU has it (as perf does); an explicit period needs it.
  const bool has_mtc = pmu.CapHex("mtc") != 0;
  if (options.mtc_period && (!has_mtc || options.no_mtc || options.no_tsc))
    return Fail(fmt::format("--mtc-period: {}/caps/mtc is {}{}", pmu.dir,
                            has_mtc ? "1" : "0 (this CPU has no MTC packets)",
                            has_mtc ? " but --no-tsc/--no-mtc turned timing off" : ""));
  if (has_mtc && !options.no_mtc && !options.no_tsc) {
    const uint64_t period = options.mtc_period.value_or(3);
    if (auto s = CheckBitmap(pmu, "mtc_periods", period, "--mtc-period"); !s)
      return tl::unexpected(s.error());
    if (auto s = set("mtc", 1); !s) return tl::unexpected(s.error());
    if (auto s = set("mtc_period", period); !s) return tl::unexpected(s.error());
  }
  const bool has_psb_cyc = pmu.CapHex("psb_cyc") != 0;
  if (options.psb_period) {
    if (!has_psb_cyc)
      return Fail(fmt::format("--psb-period: {}/caps/psb_cyc is 0: this CPU has a fixed PSB "
                              "frequency", pmu.dir));
    if (auto s = CheckBitmap(pmu, "psb_periods", *options.psb_period, "--psb-period"); !s)
      return tl::unexpected(s.error());
  }
  if (has_psb_cyc)
    if (auto s = set("psb_period", options.psb_period.value_or(3)); !s)
      return tl::unexpected(s.error());
  if (options.cyc_threshold) {
    if (!has_psb_cyc)
      return Fail(fmt::format("--cyc-threshold: {}/caps/psb_cyc is 0: this CPU has no CYC packets",
                              pmu.dir));
    if (auto s = CheckBitmap(pmu, "cycle_thresholds", *options.cyc_threshold, "--cyc-threshold");
        !s)
      return tl::unexpected(s.error());
    if (auto s = set("cyc", 1); !s) return tl::unexpected(s.error());
    if (auto s = set("cyc_thresh", *options.cyc_threshold); !s) return tl::unexpected(s.error());
  }

  std::vector<AddressFilter> filters;
  for (const std::string& text : options.filters) {
    auto parsed = ParseAddressFilters(text);
    if (!parsed) return tl::unexpected(parsed.error());
    filters.insert(filters.end(), parsed->begin(), parsed->end());
  }
  const uint64_t ranges = pmu.CapDecimal("num_address_ranges");
  if (filters.size() > ranges)
    return Fail(fmt::format("--filter: {} address filters but {}/caps/num_address_ranges is {}",
                            filters.size(), pmu.dir, ranges));
  for (const AddressFilter& f : filters) {
    if (f.file.empty() && !options.kernel)
      return Fail(fmt::format("--filter '{}': a filter without @FILE is a kernel address: add "
                              "--kernel, or name the file the address is in",
                              FormatAddressFilters({f})));
    if (f.file.empty() && f.start < 0xffff800000000000ull)
      return Fail(fmt::format("--filter '{}': {:#x} is not a kernel address: user-space filters "
                              "need @FILE", FormatAddressFilters({f}), f.start));
  }
  out.filter = FormatAddressFilters(filters);
  return out;
}

}  // namespace ptprof::record::hw
