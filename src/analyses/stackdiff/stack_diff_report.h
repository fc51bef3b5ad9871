#pragma once
// How a StackDiff is written: a text table of the largest differences (with the totals, the
// shared fraction, the class counts and the low-overlap warning above it) and JSON with every path.
#include <cstddef>
#include <string>

#include <nlohmann/json.hpp>

#include "src/analyses/stackdiff/stack_diff.h"

namespace ptprof::stackdiff {

struct StackDiffNames {
  std::string a, b;  // the inputs, as the user named them
};

std::string StackDiffText(const StackDiff& diff, const StackDiffNames& names, size_t top);

// {"a":{...},"b":{...},"weight","changed_threshold","shared_a","shared_b","overlap",
//  "only_in_a_functions"/"only_in_b_functions":[{"function","places","entries","insns","ns","share"}],
//  "counts":{...},"warning",
//  "largest":[path...], "paths":[{"path":[...],"change","a":{...},"b":{...},"delta_share"}]}
nlohmann::json StackDiffJson(const StackDiff& diff, const StackDiffNames& names, size_t top);
// StackDiffJson with null for its paths (for a writer that prints them itself:
// src/report/stack_diff_json_text.h).
nlohmann::json StackDiffHeadJson(const StackDiff& diff, const StackDiffNames& names, size_t top);

}  // namespace ptprof::stackdiff
