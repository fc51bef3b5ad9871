#pragma once
// KernelFacts answers "what does this kernel address mean for the flow?" from a guest's
// /proc/kallsyms: where the syscall entry is (entry_SYSCALL_64), which addresses are interrupt or
// exception entry points (a block starting there after anything but an instruction that branches
// there is an asynchronous transfer), whether an exception entry is a fault (the faulting
// instruction did not complete) and which syscall handler (`__x64_sys_NAME`) starts at an address.
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "sideband/kallsyms.h"
#include "src/model/result.h"

namespace ptprof::record {

class KernelFacts {
 public:
  enum class Entry : uint8_t { kNone, kInterrupt, kFault };

  // Fails when the symbols do not name entry_SYSCALL_64 (not an x86-64 kernel's kallsyms).
  static Result<KernelFacts> FromKallsyms(const std::vector<KallsymsEntry>& entries,
                                          const std::string& name);

  uint64_t syscall_entry() const { return syscall_entry_; }
  Entry EntryAt(uint64_t address) const;
  // "getpid" for the start of __x64_sys_getpid, "" elsewhere.
  const std::string& HandlerAt(uint64_t address) const;
  size_t handlers() const { return handlers_.size(); }

 private:
  uint64_t syscall_entry_ = 0;
  std::unordered_map<uint64_t, Entry> entries_;
  uint64_t irq_stubs_begin_ = 0, irq_stubs_end_ = 0;  // irq_entries_start .. spurious_entries_start
  std::unordered_map<uint64_t, std::string> handlers_;
};

}  // namespace ptprof::record
