#include "src/record/intel_pt/pmu_sysfs.h"

#include <dirent.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

namespace ptprof::record::hw {

namespace {

std::string Trim(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ' || text.back() == '\t'))
    text.pop_back();
  size_t start = text.find_first_not_of(" \t");
  return start == std::string::npos ? std::string() : text.substr(start);
}

bool ReadText(const std::string& path, std::string* out) {
  std::ifstream in(path);
  if (!in) return false;
  std::ostringstream text;
  text << in.rdbuf();
  *out = Trim(text.str());
  return true;
}

std::vector<std::string> ListDir(const std::string& path) {
  std::vector<std::string> names;
  DIR* dir = opendir(path.c_str());
  if (!dir) return names;
  while (dirent* entry = readdir(dir)) {
    std::string name = entry->d_name;
    if (name != "." && name != "..") names.push_back(name);
  }
  closedir(dir);
  std::sort(names.begin(), names.end());
  return names;
}

__u64& WordOf(HwAttr& attr, FormatField::Word word) {
  switch (word) {
    case FormatField::Word::kConfig1: return attr.attr.config1;
    case FormatField::Word::kConfig2: return attr.attr.config2;
    case FormatField::Word::kConfig3: return attr.config3;
    default: return attr.attr.config;
  }
}

}  // namespace

unsigned FormatField::Width() const {
  unsigned width = 0;
  for (const auto& [lo, hi] : ranges) width += hi - lo + 1;
  return width;
}

uint64_t PmuSysfs::CapHex(const std::string& cap) const {
  auto it = caps.find(cap);
  return it == caps.end() ? 0 : std::strtoull(it->second.c_str(), nullptr, 16);
}

uint64_t PmuSysfs::CapDecimal(const std::string& cap) const {
  auto it = caps.find(cap);
  return it == caps.end() ? 0 : std::strtoull(it->second.c_str(), nullptr, 10);
}

std::string SysfsRoot() {
  const char* root = std::getenv("PTPROF_SYSFS_ROOT");
  return root && *root ? root : "/sys";
}

std::vector<std::string> ListPmus(const std::string& sysfs_root) {
  return ListDir(sysfs_root + "/bus/event_source/devices");
}

Result<FormatField> ParseFormatField(const std::string& text, const std::string& where) {
  const size_t colon = text.find(':');
  if (colon == std::string::npos)
    return Fail(fmt::format("{}: '{}': expected WORD:LO[-HI] like config:14-17", where, text));
  FormatField field;
  const std::string word = text.substr(0, colon);
  if (word == "config") field.word = FormatField::Word::kConfig;
  else if (word == "config1") field.word = FormatField::Word::kConfig1;
  else if (word == "config2") field.word = FormatField::Word::kConfig2;
  else if (word == "config3") field.word = FormatField::Word::kConfig3;
  else return Fail(fmt::format("{}: '{}': unknown attr word '{}'", where, text, word));
  std::string rest = text.substr(colon + 1);
  size_t at = 0;
  while (at <= rest.size()) {
    size_t end = rest.find(',', at);
    if (end == std::string::npos) end = rest.size();
    const std::string part = rest.substr(at, end - at);
    char* stop = nullptr;
    const unsigned long lo = std::strtoul(part.c_str(), &stop, 10);
    unsigned long hi = lo;
    if (stop == part.c_str())
      return Fail(fmt::format("{}: '{}': offset {}: expected a bit number", where, text,
                              colon + 1 + at));
    if (*stop == '-') hi = std::strtoul(stop + 1, &stop, 10);
    if (*stop != '\0' || hi < lo || hi > 63)
      return Fail(fmt::format("{}: '{}': offset {}: bad bit range '{}'", where, text,
                              colon + 1 + at, part));
    field.ranges.emplace_back(static_cast<unsigned>(lo), static_cast<unsigned>(hi));
    at = end + 1;
  }
  return field;
}

Result<PmuSysfs> ReadPmuSysfs(const std::string& sysfs_root, const std::string& name) {
  PmuSysfs pmu;
  pmu.name = name;
  pmu.dir = sysfs_root + "/bus/event_source/devices/" + name;
  std::string type;
  if (!ReadText(pmu.dir + "/type", &type))
    return Fail(fmt::format("{}/type: no such PMU", pmu.dir));
  char* end = nullptr;
  pmu.type = static_cast<uint32_t>(std::strtoul(type.c_str(), &end, 10));
  if (end == type.c_str())
    return Fail(fmt::format("{}/type: offset 0: not a number: '{}'", pmu.dir, type));
  for (const std::string& entry : ListDir(pmu.dir + "/format")) {
    std::string text;
    if (!ReadText(pmu.dir + "/format/" + entry, &text)) continue;
    auto field = ParseFormatField(text, pmu.dir + "/format/" + entry);
    if (!field) return tl::unexpected(field.error());
    pmu.formats[entry] = *field;
  }
  for (const char* group : {"caps", "sinks"}) {
    auto& into = std::string(group) == "caps" ? pmu.caps : pmu.sinks;
    for (const std::string& entry : ListDir(pmu.dir + "/" + group)) {
      std::string text;
      if (ReadText(pmu.dir + "/" + group + "/" + entry, &text)) into[entry] = text;
    }
  }
  return pmu;
}

Status SetFormatField(HwAttr& attr, const PmuSysfs& pmu, const std::string& name,
                      uint64_t value) {
  auto it = pmu.formats.find(name);
  if (it == pmu.formats.end())
    return Fail(fmt::format("{}/format/{}: missing: this kernel's {} PMU has no '{}' option",
                            pmu.dir, name, pmu.name, name));
  const FormatField& field = it->second;
  if (field.Width() < 64 && (value >> field.Width()) != 0)
    return Fail(fmt::format("{}/format/{}: value {} does not fit in {} bits", pmu.dir, name, value,
                            field.Width()));
  __u64& word = WordOf(attr, field.word);
  for (const auto& [lo, hi] : field.ranges) {
    const unsigned width = hi - lo + 1;
    const uint64_t mask = width == 64 ? ~0ull : ((1ull << width) - 1);
    word = (word & ~(mask << lo)) | ((value & mask) << lo);
    value = width == 64 ? 0 : value >> width;
  }
  return {};
}

uint64_t GetFormatField(const HwAttr& attr, const PmuSysfs& pmu, const std::string& name) {
  auto it = pmu.formats.find(name);
  return it == pmu.formats.end() ? 0 : GetFormatField(attr, it->second);
}

uint64_t GetFormatField(const HwAttr& attr, const FormatField& field) {
  HwAttr copy = attr;
  const uint64_t word = WordOf(copy, field.word);
  uint64_t value = 0;
  unsigned shift = 0;
  for (const auto& [lo, hi] : field.ranges) {
    const unsigned width = hi - lo + 1;
    const uint64_t mask = width == 64 ? ~0ull : ((1ull << width) - 1);
    value |= ((word >> lo) & mask) << shift;
    shift += width;
  }
  return value;
}

}  // namespace ptprof::record::hw
