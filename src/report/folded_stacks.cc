#include "src/report/folded_stacks.h"

#include <fmt/format.h>

namespace ptprof {

namespace {

std::string FrameName(const std::string& name) {
  std::string frame = name.empty() ? std::string("[unknown]") : name;
  for (char& c : frame) {
    if (c == ';') c = ':';
    else if (c == ' ' || c == '\t' || c == '\n' || c == '\r') c = '_';
  }
  return frame;
}

void Fold(const CallTreeNode& node, const std::string& prefix, TreeWeight weight, std::string& out) {
  const std::string path = prefix.empty() ? FrameName(node.name) : prefix + ";" + FrameName(node.name);
  if (uint64_t self = SelfWeight(node, weight)) out += fmt::format("{} {}\n", path, self);
  for (const auto& child : node.children) Fold(*child, path, weight, out);
}

}  // namespace

std::string FoldedStacks(const CallTree& tree, TreeWeight weight) {
  std::string out;
  // Weight of the nameless root itself (instructions outside any known frame) has no path to go on.
  if (uint64_t self = SelfWeight(tree.root(), weight)) out += fmt::format("[outside] {}\n", self);
  for (const auto& child : tree.root().children) Fold(*child, "", weight, out);
  return out;
}

}  // namespace ptprof
