#include "src/record/triggers/syscall_names.h"

#include "sideband/syscall_table.h"

namespace ptprof::record::triggers {

std::optional<uint64_t> SyscallNumberOf(std::string_view name) {
  if (auto number = SyscallNumber(SyscallArch::kX86_64, name)) return *number;
  if (name.empty() || name.size() > 4 || name.find_first_not_of("0123456789") != std::string_view::npos)
    return std::nullopt;
  uint64_t number = 0;
  for (char c : name) number = number * 10 + static_cast<uint64_t>(c - '0');
  return number;
}

std::string_view SyscallNameOf(uint64_t number) {
  if (number > UINT32_MAX) return {};
  return SyscallName(SyscallArch::kX86_64, static_cast<uint32_t>(number)).value_or("");
}

std::string SyscallHint(std::string_view name) {
  auto near = NearSyscallNames(SyscallArch::kX86_64, name, 1);
  return near.empty() ? std::string() : " (did you mean " + near[0] + "?)";
}

}  // namespace ptprof::record::triggers
