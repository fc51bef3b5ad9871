#pragma once
// BuiltinPatterns answers "which patterns does ptprof know by name?": the interrupt-disable and
// -enable groups of x86-64 Linux (superCLI, superSTI), AArch64 and AArch32, spin-wait pause runs,
// and kernel FPU/SIMD use. Each is written in the pattern language itself, so the documentation
// (docs/delta.md) shows exactly what is matched.
#include <string_view>
#include <vector>

namespace ptprof::patterns {

struct BuiltinPattern {
  std::string_view name;
  std::string_view definition;
  std::string_view why;  // what it matches and why, one sentence
};

const std::vector<BuiltinPattern>& BuiltinPatterns();

}  // namespace ptprof::patterns
