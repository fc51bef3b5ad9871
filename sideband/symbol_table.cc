#include "sideband/symbol_table.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <iterator>

#include "sideband/demangle.h"

namespace ptprof {

void SymbolTable::Add(Symbol symbol) {
  symbols_.push_back(std::move(symbol));
  sorted_ = false;
}

void SymbolTable::AddAll(std::vector<Symbol> symbols) {
  if (symbols.empty()) return;
  if (symbols_.empty()) {
    symbols_ = std::move(symbols);
  } else {
    if (symbols_.capacity() < symbols_.size() + symbols.size())  // geometric, not one per image
      symbols_.reserve(std::max(symbols_.size() + symbols.size(), 2 * symbols_.capacity()));
    std::move(symbols.begin(), symbols.end(), std::back_inserter(symbols_));
  }
  sorted_ = false;
}

void SymbolTable::Sort() const {
  if (sorted_.load(std::memory_order_acquire)) return;
  std::lock_guard<std::mutex> lock(sort_mutex_);
  if (sorted_.load(std::memory_order_relaxed)) return;
  ForgetShown();  // by index into symbols_, which moves
  // By address; at equal addresses prefer sized symbols (functions) over labels, then by name so
  // that the choice does not depend on the order of the symbol tables.
  std::stable_sort(symbols_.begin(), symbols_.end(), [](const Symbol& a, const Symbol& b) {
    if (a.address != b.address) return a.address < b.address;
    if ((a.size != 0) != (b.size != 0)) return a.size != 0;
    return a.name < b.name;
  });
  // Walk's answer changes only where an address crosses a symbol's start, its end or a label's
  // limit: index it once at each of those, keeping only the changes.
  std::vector<uint64_t> bounds;
  bounds.reserve(symbols_.size() * 2);
  for (const Symbol& s : symbols_) {
    bounds.push_back(s.address);
    if (s.size && s.address + s.size > s.address) bounds.push_back(s.address + s.size);
    if (!s.size && s.limit > s.address) bounds.push_back(s.limit);
  }
  std::sort(bounds.begin(), bounds.end());
  bounds.erase(std::unique(bounds.begin(), bounds.end()), bounds.end());
  starts_.clear();
  found_.clear();
  for (const uint64_t bound : bounds) {
    const Symbol* s = Walk(bound);
    const uint32_t found = s ? static_cast<uint32_t>(s - symbols_.data()) : kNone;
    if (!found_.empty() && found_.back() == found) continue;
    starts_.push_back(bound);
    found_.push_back(found);
  }
  MakeShown();
  sorted_.store(true, std::memory_order_release);
}

const Symbol* SymbolTable::Find(uint64_t address) const {
  Sort();
  const auto it = std::upper_bound(starts_.begin(), starts_.end(), address);
  if (it == starts_.begin()) return nullptr;
  const uint32_t found = found_[static_cast<size_t>(it - starts_.begin()) - 1];
  return found == kNone ? nullptr : &symbols_[found];
}

const Symbol* SymbolTable::FindByWalk(uint64_t address) const {
  Sort();
  return Walk(address);
}

const Symbol* SymbolTable::Walk(uint64_t address) const {
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

void SymbolTable::MakeShown() const {
  shown_ = std::make_unique<std::atomic<const std::string*>[]>(symbols_.size());
  shown_slots_ = symbols_.size();
}

void SymbolTable::ForgetShown() const {
  if (!shown_) return;
  for (size_t i = 0; i < shown_slots_; ++i) delete shown_[i].load();
  shown_.reset();
  shown_slots_ = 0;
}

const std::string& SymbolTable::ShownName(const Symbol& symbol) const {
  if (!MayBeMangled(symbol.name)) return symbol.name;
  // `symbol` came from Find or FindNamed, which sorted the table and made the slots.
  std::atomic<const std::string*>& slot = shown_[static_cast<size_t>(&symbol - symbols_.data())];
  if (const std::string* shown = slot.load(std::memory_order_acquire)) return *shown;
  auto made = std::make_unique<const std::string>(Demangled(symbol.name));
  const std::string* expected = nullptr;
  if (slot.compare_exchange_strong(expected, made.get(), std::memory_order_acq_rel))
    return *made.release();
  return *expected;  // another thread's, the same
}

std::string SymbolTable::Describe(uint64_t address) const {
  const Symbol* s = Find(address);
  if (!s) return {};
  const std::string& name = ShownName(*s);
  if (address == s->address) return name;
  // name+0x13, without printf: this runs for every address a text output names.
  char buf[24] = "+0x";
  const char* end = std::to_chars(buf + 3, buf + sizeof buf, address - s->address, 16).ptr;
  std::string text;
  text.reserve(name.size() + static_cast<size_t>(end - buf));
  text += name;
  text.append(buf, static_cast<size_t>(end - buf));
  return text;
}

}  // namespace ptprof
