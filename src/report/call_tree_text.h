#pragma once
// CallTreeText answers "where did this section spend its instructions and time, call by call?" as
// indented text: one line per call path with its entries, inclusive and exclusive instructions and
// nanoseconds and its share of the whole tree, pruned by share and depth. CallTreeJson is the same
// tree as JSON: `ptprof stacks --format json` and the data the sunburst HTML embeds.
#include <cstdio>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "src/analyses/support/call_tree.h"

namespace ptprof {

// What a share or a flame-graph count is measured in.
enum class TreeWeight { kInsns, kNs };

// "insns" / "ns"; nullopt-like: false when `text` is neither.
bool ParseTreeWeight(const std::string& text, TreeWeight& weight);
const char* TreeWeightName(TreeWeight weight);
// A node's inclusive / exclusive weight.
uint64_t TotalWeight(const CallTreeNode& node, TreeWeight weight);
uint64_t SelfWeight(const CallTreeNode& node, TreeWeight weight);
// Pushes `node`'s children onto `stack`, heaviest first by `weight` (equal ones in order of first
// entry), and returns where they begin: a writer walking a tree keeps one stack for every level
// and cuts it back to that index when it is done with them, rather than a vector per node.
size_t PushChildrenByWeight(const CallTreeNode& node, TreeWeight weight,
                            std::vector<const CallTreeNode*>& stack);

struct CallTreeTextOptions {
  std::string title;           // first line, e.g. the input and what was selected
  TreeWeight weight = TreeWeight::kInsns;  // what the share column is a share of
  double min_share = 0;        // percent of the whole tree below which a path is summarised
  int max_depth = 0;           // deepest level shown (1: the root's children); 0: all
};

// The table: a header, then one line per shown node, children indented under their parent in
// order of decreasing weight; pruned children become one "(N more ...)" line under their parent.
std::string CallTreeText(const CallTree& tree, const CallTreeTextOptions& options);
// The same table written to `file` as it is made, a megabyte at a time.
void WriteCallTreeText(const CallTree& tree, const CallTreeTextOptions& options, std::FILE* file);

// {"name","entries","self_insns","total_insns","self_ns","total_ns","children":[...]} from the
// (nameless) root down; children in order of decreasing instructions.
nlohmann::json CallTreeJson(const CallTreeNode& node);

}  // namespace ptprof
