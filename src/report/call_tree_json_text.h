#pragma once
// WriteJsonWithTree answers "the call tree as JSON, for a tree of hundreds of thousands of
// nodes": the text CallTreeJson(node).dump(1) gives (src/report/call_tree_text.h), byte for byte,
// written to a file as it is made rather than built as a document first. A compiler's tree (300 K
// nodes, 320 MB of indented JSON) took 2.4 s to make and print as a document on top of a 0.7 s
// decode.
#include <cstdio>
#include <string>

#include <nlohmann/json.hpp>

#include "src/analyses/support/call_tree.h"

namespace ptprof {

// `document` printed as dump(1) prints it, its last member `member` (which holds null) given
// the tree of `node` (as CallTreeJson(node)), and a line break, written to `file`.
void WriteJsonWithTree(const nlohmann::json& document, const std::string& member,
                       const CallTreeNode& node, std::FILE* file);

}  // namespace ptprof
