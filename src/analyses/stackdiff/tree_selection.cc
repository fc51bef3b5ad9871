#include "src/analyses/stackdiff/tree_selection.h"

#include "sideband/demangle.h"

namespace ptprof::stackdiff {

namespace {

void CopyInto(CallTreeNode& into, const CallTreeNode& from) {
  into.entries += from.entries;
  into.self_insns += from.self_insns;
  into.self_ns += from.self_ns;
  for (const auto& child : from.children) CopyInto(into.Child(child->name), *child);
}

void Collect(const CallTreeNode& node, const std::string& symbol, Subtrees& out) {
  for (const auto& child : node.children) {
    if (NamesShown(symbol, child->name)) {  // a C++ name: every overload
      CopyInto(out.tree.root().Child(symbol), *child);
      ++out.positions;
    } else {
      Collect(*child, symbol, out);
    }
  }
}

}  // namespace

Subtrees SubtreesBelow(const CallTree& tree, const std::string& symbol) {
  Subtrees out;
  Collect(tree.root(), symbol, out);
  out.tree.Finalize();
  return out;
}

}  // namespace ptprof::stackdiff
