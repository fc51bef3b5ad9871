#pragma once
// Which part of a call tree to show: SubtreesBelow answers "what ran below every entry into this
// function?" by merging the subtrees of every outermost node called `symbol` (a recursive call
// inside one is already part of its outer subtree and is not counted twice) into one tree whose
// top level is `symbol`. A C++ function may be named without its parameters ("ns::f" for
// "ns::f(int)"): every overload's subtrees are merged then.
#include <cstddef>
#include <string>

#include "src/analyses/support/call_tree.h"

namespace ptprof::stackdiff {

struct Subtrees {
  CallTree tree;         // finalized; empty when `symbol` never occurs
  size_t positions = 0;  // how many distinct call paths reach an outermost `symbol`
};

Subtrees SubtreesBelow(const CallTree& tree, const std::string& symbol);

}  // namespace ptprof::stackdiff
