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

// Whether a node shown as `name` is the function the user called `symbol`: the same name, or a
// C++ function's without its parameters (every overload of it).
bool Names(const std::string& symbol, const std::string& name) {
  if (name == symbol) return true;
  return name.size() > symbol.size() && name.compare(0, symbol.size(), symbol) == 0 &&
         name[symbol.size()] == '(' && WithoutParameters(name) == symbol;
}

void Collect(const CallTreeNode& node, const std::string& symbol, Subtrees& out) {
  for (const auto& child : node.children) {
    if (Names(symbol, child->name)) {
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
