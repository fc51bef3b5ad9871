#include "sideband/kallsyms.h"

#include <algorithm>
#include <charconv>

namespace ptprof {

namespace {

bool IsText(char type) { return type == 't' || type == 'T'; }

std::string_view NextField(std::string_view& line) {
  size_t start = line.find_first_not_of(" \t");
  if (start == std::string_view::npos) {
    line = {};
    return {};
  }
  line.remove_prefix(start);
  size_t end = line.find_first_of(" \t");
  std::string_view field = line.substr(0, end);
  line.remove_prefix(end == std::string_view::npos ? line.size() : end);
  return field;
}

}  // namespace

Result<std::vector<KallsymsEntry>> ParseKallsyms(std::string_view text, const std::string& name) {
  std::vector<KallsymsEntry> entries;
  size_t hidden = 0;
  while (!text.empty()) {
    size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    std::string_view address = NextField(line);
    std::string_view type = NextField(line);
    std::string_view symbol = NextField(line);
    std::string_view module = NextField(line);
    if (address.empty() || type.size() != 1 || symbol.empty()) continue;
    KallsymsEntry entry;
    auto [ptr, ec] = std::from_chars(address.data(), address.data() + address.size(),
                                     entry.address, 16);
    if (ec != std::errc() || ptr != address.data() + address.size()) continue;
    if (entry.address == 0) {
      ++hidden;
      continue;
    }
    entry.type = type[0];
    entry.name = std::string(symbol);
    if (module.size() > 2 && module.front() == '[' && module.back() == ']')
      entry.module = std::string(module.substr(1, module.size() - 2));
    entries.push_back(std::move(entry));
  }
  if (entries.empty())
    return Fail(name + ": no kernel symbols" +
                (hidden ? " (every address is 0: kptr_restrict hid them)" : std::string()));
  return entries;
}

std::vector<Symbol> KallsymsTextSymbols(const std::vector<KallsymsEntry>& entries) {
  std::vector<const KallsymsEntry*> text;
  for (const auto& entry : entries)
    if (IsText(entry.type)) text.push_back(&entry);
  std::stable_sort(text.begin(), text.end(), [](const KallsymsEntry* a, const KallsymsEntry* b) {
    return a->address < b->address;
  });
  std::vector<Symbol> symbols;
  symbols.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    // Aliases share an address: one name each, a global one before a local one, among those the
    // one listed last (the kernel lists __do_sys_getpid, __ia32_sys_getpid, __x64_sys_getpid).
    size_t next = i + 1;
    const KallsymsEntry* best = text[i];
    for (; next < text.size() && text[next]->address == text[i]->address; ++next)
      if (text[next]->type == 'T' || best->type == 't') best = text[next];
    Symbol symbol;
    symbol.name = best->module.empty() ? best->name : best->name + " [" + best->module + "]";
    symbol.address = best->address;
    // Bounded by the next symbol at a higher address.
    symbol.size = next < text.size() ? text[next]->address - best->address : 0x1000;
    symbols.push_back(std::move(symbol));
    i = next;
  }
  return symbols;
}

}  // namespace ptprof
