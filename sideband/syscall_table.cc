#include "sideband/syscall_table.h"

#include <algorithm>

namespace ptprof {

extern const SyscallEntry kX86_64Syscalls[];
extern const size_t kX86_64SyscallsSize;
extern const SyscallEntry kGenericSyscalls[];
extern const size_t kGenericSyscallsSize;

namespace {

struct Table {
  const SyscallEntry* entries;
  size_t size;
};

Table TableOf(SyscallArch arch) {
  if (arch == SyscallArch::kX86_64) return {kX86_64Syscalls, kX86_64SyscallsSize};
  return {kGenericSyscalls, kGenericSyscallsSize};
}

size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

}  // namespace

std::optional<std::string_view> SyscallName(SyscallArch arch, uint32_t number) {
  const Table table = TableOf(arch);
  const SyscallEntry* end = table.entries + table.size;
  const SyscallEntry* it = std::lower_bound(
      table.entries, end, number, [](const SyscallEntry& e, uint32_t n) { return e.number < n; });
  if (it == end || it->number != number) return std::nullopt;
  return std::string_view(it->name);
}

std::optional<uint32_t> SyscallNumber(SyscallArch arch, std::string_view name) {
  const Table table = TableOf(arch);
  for (size_t i = 0; i < table.size; ++i)
    if (name == table.entries[i].name) return table.entries[i].number;
  return std::nullopt;
}

std::vector<SyscallEntry> SyscallEntries(SyscallArch arch) {
  const Table table = TableOf(arch);
  return std::vector<SyscallEntry>(table.entries, table.entries + table.size);
}

std::vector<std::string> NearSyscallNames(SyscallArch arch, std::string_view name, size_t count) {
  const Table table = TableOf(arch);
  std::vector<std::pair<size_t, std::string>> scored;
  for (size_t i = 0; i < table.size; ++i) {
    std::string_view candidate = table.entries[i].name;
    size_t score = EditDistance(name, candidate) * 2;
    if (!name.empty() && candidate.substr(0, name.size()) == name) score = std::min<size_t>(score, 1);
    scored.emplace_back(score, std::string(candidate));
  }
  std::stable_sort(scored.begin(), scored.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::string> near;
  for (size_t i = 0; i < scored.size() && near.size() < count; ++i)
    near.push_back(scored[i].second);
  return near;
}

}  // namespace ptprof
