#pragma once
// ParseKallsyms answers "which kernel symbols does this copy of /proc/kallsyms name, and where?":
// lines "ADDRESS TYPE NAME [\t[MODULE]]" become symbols (text symbols only unless asked otherwise),
// each bounded by the next symbol, so that kernel addresses in a trace can be symbolised.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sideband/symbol_table.h"
#include "src/model/result.h"

namespace ptprof {

struct KallsymsEntry {
  uint64_t address = 0;
  char type = 0;      // nm-style type letter: 't'/'T' text, 'd'/'D' data, ...
  std::string name;
  std::string module;  // "" for the kernel image itself
};

// Reads every well-formed line; `name` is used in the error for text that holds none. Lines with
// address 0 (kptr_restrict hides the addresses) are skipped.
Result<std::vector<KallsymsEntry>> ParseKallsyms(std::string_view text, const std::string& name);

// The text symbols of `entries` as SymbolTable symbols: each one covers up to the next text symbol
// (kallsyms has no sizes).
std::vector<Symbol> KallsymsTextSymbols(const std::vector<KallsymsEntry>& entries);

}  // namespace ptprof
