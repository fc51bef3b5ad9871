#pragma once
// WriteStackDiffJson answers "the JSON of `ptprof stacks --diff`, for two trees of hundreds of
// thousands of paths": the text StackDiffJson(...).dump(1) gives (src/analyses/stackdiff/
// stack_diff_report.h), byte for byte, written to a file as it is made rather than built as a
// document first. A compiler against itself is 300 K paths hundreds of frames deep, 635 MB of
// indented JSON, which as one document took 14 s and 3.2 GB of memory to make and print.
#include <cstddef>
#include <cstdio>

#include "src/analyses/stackdiff/stack_diff_report.h"

namespace ptprof {

// StackDiffJson(diff, names, top).dump(1) and a line break, written to `file`. Throws what the
// printer throws for a name that is not UTF-8, before anything is written.
void WriteStackDiffJson(const stackdiff::StackDiff& diff, const stackdiff::StackDiffNames& names,
                        size_t top, std::FILE* file);

}  // namespace ptprof
