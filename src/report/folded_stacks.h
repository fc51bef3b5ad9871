#pragma once
// FoldedStacks answers "what does a flame-graph tool need to draw this tree?": one line per call
// path that has weight of its own, "outer;inner;leaf COUNT", the format flamegraph.pl, inferno and
// speedscope read. The counts add up to the tree's total (instructions or nanoseconds).
#include <cstdio>
#include <string>

#include "src/analyses/support/call_tree.h"
#include "src/report/call_tree_text.h"

namespace ptprof {

// Lines in the tree's order (parents before children). Frame names keep their spelling except
// that ';' (the separator) becomes ':' and whitespace becomes '_' (the count follows a space).
std::string FoldedStacks(const CallTree& tree, TreeWeight weight);
// The same lines written to `file` as they are made, a megabyte at a time (a large program's
// come to hundreds of MB).
void WriteFoldedStacks(const CallTree& tree, TreeWeight weight, std::FILE* file);

}  // namespace ptprof
