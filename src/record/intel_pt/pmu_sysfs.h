#pragma once
// PmuSysfs answers "what does this kernel say about a perf PMU?": its dynamic type number, the
// attr bits each named option occupies (format/*, e.g. "config:14-17"), its capabilities (caps/*)
// and, for CoreSight, its sinks (sinks/*). Read from SYSFS_ROOT/bus/event_source/devices/NAME,
// where SYSFS_ROOT is /sys or $PTPROF_SYSFS_ROOT (tests point it at tests/fixtures/sysfs/...).
// The intel_pt and cs_etm backends build their perf_event_attr from it, so every option lands on
// the bits this kernel documents.
#include <linux/perf_event.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "src/model/result.h"

namespace ptprof::record::hw {

// One format entry: which attr word and which bits ("config:14-17", "config2:0-31",
// "config:0-3,8" for split fields: the value's bits fill the ranges from the lowest up).
struct FormatField {
  enum class Word { kConfig, kConfig1, kConfig2, kConfig3 };
  Word word = Word::kConfig;
  std::vector<std::pair<unsigned, unsigned>> ranges;  // [lo, hi] bit ranges
  unsigned Width() const;
};

struct PmuSysfs {
  std::string name;
  std::string dir;  // where it was read from (for messages)
  uint32_t type = 0;
  std::map<std::string, FormatField> formats;
  std::map<std::string, std::string> caps;   // caps/NAME -> its text, trimmed
  std::map<std::string, std::string> sinks;  // sinks/NAME -> its text, trimmed (cs_etm)

  bool HasFormat(const std::string& field) const { return formats.count(field) != 0; }
  // caps/NAME as a number (the kernel prints most caps in hex without 0x); 0 when absent.
  uint64_t CapHex(const std::string& cap) const;
  uint64_t CapDecimal(const std::string& cap) const;
};

// $PTPROF_SYSFS_ROOT or "/sys".
std::string SysfsRoot();
// ROOT/bus/event_source/devices/NAME; an error names the missing path.
Result<PmuSysfs> ReadPmuSysfs(const std::string& sysfs_root, const std::string& name);
// The PMUs that exist (directory names under ROOT/bus/event_source/devices).
std::vector<std::string> ListPmus(const std::string& sysfs_root);
// "config:14-17" -> FormatField; `where` names the file in errors.
Result<FormatField> ParseFormatField(const std::string& text, const std::string& where);
// A perf_event_attr with config3 (Linux 6.3+, after sig_data; the installed uapi header may be
// older) and the address-filter text set with PERF_EVENT_IOC_SET_FILTER.
struct HwAttr {
  perf_event_attr attr{};
  __u64 config3 = 0;
  std::string filter;
};

// Puts `value` into the field's bits; fails if the PMU has no such field or the value does not fit.
Status SetFormatField(HwAttr& attr, const PmuSysfs& pmu, const std::string& field, uint64_t value);
// The field's value (for tests and for describing an attr).
uint64_t GetFormatField(const HwAttr& attr, const FormatField& field);
uint64_t GetFormatField(const HwAttr& attr, const PmuSysfs& pmu, const std::string& field);

}  // namespace ptprof::record::hw
