#pragma once
// Tests only: a call tree written by hand, one path per line, "a;b;c INSNS NS ENTRIES" adding
// self instructions, self nanoseconds and entries to the node at that path.
#include <sstream>
#include <string>

#include "src/analyses/support/call_tree.h"

namespace ptprof::testing {

inline CallTree TreeFromLines(const std::string& lines) {
  CallTree tree;
  std::istringstream in(lines);
  std::string path;
  uint64_t insns = 0, ns = 0, entries = 0;
  while (in >> path >> insns >> ns >> entries) {
    CallTreeNode* node = &tree.root();
    std::istringstream names(path);
    std::string name;
    while (std::getline(names, name, ';')) node = &node->Child(name);
    node->self_insns += insns;
    node->self_ns += ns;
    node->entries += entries;
  }
  tree.Finalize();
  return tree;
}

}  // namespace ptprof::testing
