#pragma once
// SymbolTable answers "which named symbol covers this address, and how far into it are we?" for
// the symbols of the images we loaded ("main+0x13"). Symbols keep their linkage names, which
// FindNamed and the triggers match; what the outputs show is ShownName, C++ names demangled.
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ptprof {

struct Symbol {
  std::string name;  // the linkage name, as the symbol table has it (C++ names mangled)
  uint64_t address = 0;
  uint64_t size = 0;    // 0: unknown size (assembly labels); covers up to the next symbol
  uint64_t limit = 0;   // end of the loaded segment holding the symbol; bounds unsized symbols
};

class SymbolTable {
 public:
  SymbolTable() = default;
  ~SymbolTable() { ForgetShown(); }
  SymbolTable(const SymbolTable& other) { *this = other; }
  SymbolTable& operator=(const SymbolTable& other) {
    if (this == &other) return *this;
    std::lock_guard<std::mutex> lock(other.sort_mutex_);
    ForgetShown();
    symbols_ = other.symbols_;
    starts_ = other.starts_;
    found_ = other.found_;
    if (other.sorted_.load()) MakeShown();
    sorted_ = other.sorted_.load();
    return *this;
  }
  // Moved, the symbols, their index and the names shown so far go along, and `other` is left
  // empty: a session is moved out of the function that opens it, and a compiler's table holds
  // about a hundred thousand symbols (copied there, 2.5 ms and as many allocations and frees
  // at the start of every command on it). Not while another thread asks `other`.
  SymbolTable(SymbolTable&& other) noexcept { *this = std::move(other); }
  SymbolTable& operator=(SymbolTable&& other) noexcept {
    if (this == &other) return *this;
    ForgetShown();
    symbols_ = std::exchange(other.symbols_, {});
    starts_ = std::exchange(other.starts_, {});
    found_ = std::exchange(other.found_, {});
    shown_ = std::move(other.shown_);
    shown_slots_ = std::exchange(other.shown_slots_, 0);
    sorted_ = other.sorted_.exchange(true);  // an empty table is sorted
    return *this;
  }

  void Add(Symbol symbol);
  // Add for each of `symbols`, moved in at once (a large binary has tens of thousands).
  void AddAll(std::vector<Symbol> symbols);

  // The symbol covering `address`, or nullptr. Once symbols are no longer added, any number of
  // threads may ask at once (the first sorts the table and indexes it, under a lock).
  const Symbol* Find(uint64_t address) const;
  // The same answer worked out from the symbols around `address` (the rule Find's index is
  // built with, kept for the tests): the closest symbol at or below it that covers it.
  const Symbol* FindByWalk(uint64_t address) const;

  // The first symbol called `name` in address order, or nullptr (a scan of every symbol).
  const Symbol* FindNamed(std::string_view name) const;

  // "name" at the symbol's start, "name+0x13" inside it, "" when no symbol covers the address;
  // the name as ShownName gives it.
  std::string Describe(uint64_t address) const;

  // The name the outputs show for `symbol` (one of this table's, from Find or FindNamed): a C++
  // name demangled ("wi::mul_internal(long*, ...)", as perf shows it), any other its linkage
  // name. Demangled the first time it is asked for (a large binary has hundreds of thousands of
  // symbols, few of which a trace meets), and kept; any number of threads may ask at once.
  const std::string& ShownName(const Symbol& symbol) const;

  size_t size() const { return symbols_.size(); }

 private:
  void Sort() const;
  const Symbol* Walk(uint64_t address) const;
  // ShownName's names, one slot per symbol (null: not asked for yet), made when the symbols are
  // sorted; ForgetShown frees them.
  void MakeShown() const;
  void ForgetShown() const;

  mutable std::vector<Symbol> symbols_;
  // Find's index: FindByWalk is the same from starts_[i] up to the next start (each a symbol's
  // start, its end, or the limit of a label), and gives found_[i] (an index into symbols_, or
  // kNone) there.
  static constexpr uint32_t kNone = UINT32_MAX;
  mutable std::vector<uint64_t> starts_;
  mutable std::vector<uint32_t> found_;
  mutable std::unique_ptr<std::atomic<const std::string*>[]> shown_;
  mutable size_t shown_slots_ = 0;
  mutable std::atomic<bool> sorted_{true};
  mutable std::mutex sort_mutex_;
};

}  // namespace ptprof
