#include "src/record/qemu_system/kernel_facts.h"

namespace ptprof::record {

namespace {

bool StartsWith(const std::string& text, const char* prefix) { return text.rfind(prefix, 0) == 0; }

// Exception entries that report the instruction after the one that raised them (traps) or that
// arrive between instructions like an interrupt (NMI, machine check).
bool IsTrapOrAsync(const std::string& name) {
  return name == "asm_exc_int3" || name == "asm_exc_debug" || name == "asm_exc_overflow" ||
         name == "asm_exc_nmi" || name == "asm_exc_machine_check" || name == "asm_exc_double_fault";
}

}  // namespace

Result<KernelFacts> KernelFacts::FromKallsyms(const std::vector<KallsymsEntry>& entries,
                                              const std::string& name) {
  KernelFacts facts;
  for (const KallsymsEntry& entry : entries) {
    if (entry.type != 't' && entry.type != 'T') continue;
    const std::string& symbol = entry.name;
    if (symbol == "entry_SYSCALL_64") {
      facts.syscall_entry_ = entry.address;
    } else if (StartsWith(symbol, "asm_exc_")) {
      facts.entries_[entry.address] = IsTrapOrAsync(symbol) ? Entry::kInterrupt : Entry::kFault;
    } else if (StartsWith(symbol, "asm_sysvec_") || symbol == "asm_common_interrupt" ||
               symbol == "asm_spurious_interrupt") {
      facts.entries_[entry.address] = Entry::kInterrupt;
    } else if (symbol == "irq_entries_start") {
      facts.irq_stubs_begin_ = entry.address;
    } else if (symbol == "spurious_entries_start") {
      facts.irq_stubs_end_ = entry.address;
    } else if (StartsWith(symbol, "__x64_sys_")) {
      facts.handlers_[entry.address] = symbol.substr(10);
    }
  }
  if (facts.syscall_entry_ == 0)
    return Fail(name + ": the kernel symbols do not name entry_SYSCALL_64");
  if (facts.irq_stubs_end_ <= facts.irq_stubs_begin_) facts.irq_stubs_end_ = facts.irq_stubs_begin_;
  return facts;
}

KernelFacts::Entry KernelFacts::EntryAt(uint64_t address) const {
  if (address >= irq_stubs_begin_ && address < irq_stubs_end_) return Entry::kInterrupt;
  auto it = entries_.find(address);
  return it == entries_.end() ? Entry::kNone : it->second;
}

const std::string& KernelFacts::HandlerAt(uint64_t address) const {
  static const std::string kNone;
  auto it = handlers_.find(address);
  return it == handlers_.end() ? kNone : it->second;
}

}  // namespace ptprof::record
