#include "sideband/symbol_table.h"

#include <algorithm>
#include <cstdio>

namespace ptprof {

void SymbolTable::Add(Symbol symbol) {
  symbols_.push_back(std::move(symbol));
  sorted_ = false;
}

void SymbolTable::Sort() const {
  if (sorted_.load(std::memory_order_acquire)) return;
  std::lock_guard<std::mutex> lock(sort_mutex_);
  if (sorted_.load(std::memory_order_relaxed)) return;
  // By address; at equal addresses prefer sized symbols (functions) over labels, then by name so
  // that the choice does not depend on the order of the symbol tables.
  std::stable_sort(symbols_.begin(), symbols_.end(), [](const Symbol& a, const Symbol& b) {
    if (a.address != b.address) return a.address < b.address;
    if ((a.size != 0) != (b.size != 0)) return a.size != 0;
    return a.name < b.name;
  });
  sorted_.store(true, std::memory_order_release);
}

const Symbol* SymbolTable::Find(uint64_t address) const {
  Sort();
  auto it = std::upper_bound(symbols_.begin(), symbols_.end(), address,
                             [](uint64_t a, const Symbol& s) { return a < s.address; });
  // Walk back over symbols that start at or before `address`: the closest one that covers it wins.
  // Nested or overlapping symbols are rare and close together, so a short walk suffices.
  for (int steps = 0; it != symbols_.begin() && steps < 64; ++steps) {
    --it;
    const Symbol& s = *it;
    if (s.size != 0) {
      if (address - s.address < s.size) {
        // Among symbols with the same start, the sorted order already put the best first.
        auto first = it;
        while (first != symbols_.begin() && (first - 1)->address == s.address) --first;
        return &*first;
      }
      continue;
    }
    if (address < s.limit) {
      // Prefer a sized symbol at the same start if it covers the address, else the first label.
      auto first = it;
      while (first != symbols_.begin() && (first - 1)->address == s.address) --first;
      for (auto at = first; at != it; ++at)
        if (at->size == 0 || address - at->address < at->size) return &*at;
      return &*it;
    }
  }
  return nullptr;
}

const Symbol* SymbolTable::FindNamed(std::string_view name) const {
  Sort();
  for (const Symbol& symbol : symbols_)
    if (symbol.name == name) return &symbol;
  return nullptr;
}

std::string SymbolTable::Describe(uint64_t address) const {
  const Symbol* s = Find(address);
  if (!s) return {};
  if (address == s->address) return s->name;
  char buf[32];
  std::snprintf(buf, sizeof buf, "+0x%llx", static_cast<unsigned long long>(address - s->address));
  return s->name + buf;
}

}  // namespace ptprof
