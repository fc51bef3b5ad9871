#include "src/report/call_tree_text.h"

#include <algorithm>
#include <cstdio>
#include <iterator>
#include <vector>

#include <fmt/compile.h>
#include <fmt/format.h>

#include "src/model/json_text.h"
#include "src/report/spilled_text.h"

namespace ptprof {

bool ParseTreeWeight(const std::string& text, TreeWeight& weight) {
  if (text == "insns") weight = TreeWeight::kInsns;
  else if (text == "ns") weight = TreeWeight::kNs;
  else return false;
  return true;
}

const char* TreeWeightName(TreeWeight weight) {
  return weight == TreeWeight::kNs ? "ns" : "insns";
}

uint64_t TotalWeight(const CallTreeNode& node, TreeWeight weight) {
  return weight == TreeWeight::kNs ? node.total_ns : node.total_insns;
}

uint64_t SelfWeight(const CallTreeNode& node, TreeWeight weight) {
  return weight == TreeWeight::kNs ? node.self_ns : node.self_insns;
}

size_t PushChildrenByWeight(const CallTreeNode& node, TreeWeight weight,
                            std::vector<const CallTreeNode*>& stack) {
  const size_t first = stack.size();
  for (const CallTreeNode* child : node.children) stack.push_back(child);
  std::stable_sort(stack.begin() + static_cast<std::ptrdiff_t>(first), stack.end(),
                   [weight](const CallTreeNode* a, const CallTreeNode* b) {
                     return TotalWeight(*a, weight) > TotalWeight(*b, weight);
                   });
  return first;
}

namespace {

double Percent(uint64_t part, uint64_t whole) {
  return whole ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}

class TextWriter {
 public:
  // With `file`, the text goes there a megabyte at a time (a large program's table is tens of
  // MB); without, it is all kept in out().
  TextWriter(const CallTreeTextOptions& options, uint64_t whole, std::FILE* file = nullptr)
      : options_(options), whole_(whole), out_(file) {}

  void Children(const CallTreeNode& node, int depth) {
    size_t pruned = 0;
    uint64_t pruned_weight = 0;
    const size_t first = PushChildrenByWeight(node, options_.weight, order_);
    const size_t last = order_.size();
    for (size_t i = first; i < last; ++i) {
      const CallTreeNode* child = order_[i];
      const uint64_t w = TotalWeight(*child, options_.weight);
      if (Percent(w, whole_) < options_.min_share ||
          (options_.max_depth > 0 && depth >= options_.max_depth)) {
        ++pruned;
        pruned_weight += w;
        continue;
      }
      Line(*child, depth);
      Children(*child, depth + 1);
    }
    order_.resize(first);
    const bool depth_cut = options_.max_depth > 0 && depth >= options_.max_depth;
    // Paths pruned by share are summarised only when they add up to a visible share themselves.
    if (pruned && (depth_cut || Percent(pruned_weight, whole_) >= options_.min_share)) {
      fmt::format_to(std::back_inserter(out()),
                     "{:>7.2f}% {:>12} {:>12} {:>12} {:>12} {:>9}  {:{}}({} more {})\n",
                     Percent(pruned_weight, whole_), "", "", "", "", "", "", 2 * depth, pruned,
                     depth_cut ? "below --depth" : "below --min-share");
      out_.Spill();
    }
  }

  // One node's line, appended piece by piece: the share through a format compiled once, the
  // counts as plain digits, the indent and name as they are. A large program's table is hundreds
  // of thousands of lines, mostly indent, and formatting each through a run-time format string
  // into a back_inserter took a third of `ptprof stacks` on a compiler's trace.
  void Line(const CallTreeNode& node, int depth) {
    columns_.clear();
    fmt::format_to(fmt::appender(columns_), FMT_COMPILE("{:>7.2f}% "),
                   Percent(TotalWeight(node, options_.weight), whole_));
    std::string& out = out_.text();
    out.append(columns_.data(), columns_.size());
    Column(node.total_insns, 12);
    Column(node.self_insns, 12);
    Column(node.total_ns, 12);
    Column(node.self_ns, 12);
    Column(node.entries, 9);
    out += ' ';
    out.append(2 * static_cast<size_t>(depth), ' ');
    out += node.name;
    out += '\n';
    out_.Spill();
  }

  // `value` right-aligned in `width` characters, then a space (as "{:>width} ").
  void Column(uint64_t value, size_t width) {
    std::string& out = out_.text();
    AppendPaddedDecimal(out, value, width);
    out += ' ';
  }

  std::string& out() { return out_.text(); }
  void Flush() { out_.Flush(); }

 private:
  const CallTreeTextOptions& options_;
  uint64_t whole_;
  SpilledText out_;
  fmt::memory_buffer columns_;  // Line's share column
  std::vector<const CallTreeNode*> order_;  // Children's stack of children by weight
};

// The header and the table into `writer`.
void WriteTable(const CallTree& tree, const CallTreeTextOptions& options, TextWriter& writer) {
  const CallTreeNode& root = tree.root();
  uint64_t entries = 0;
  for (const auto& child : root.children) entries += child->entries;
  std::string& out = writer.out();
  if (!options.title.empty()) out += options.title + "\n";
  out += fmt::format("total: {} instructions, {} ns, {} entries at the top, {} paths\n",
                     root.total_insns, root.total_ns, entries, [&tree] {
                       size_t n = 0;
                       tree.ForEach([&n](const CallTreeNode&, int) { ++n; });
                       return n;
                     }());
  out += fmt::format("{:>8} {:>12} {:>12} {:>12} {:>12} {:>9}  {}\n",
                     std::string("share ") + TreeWeightName(options.weight), "incl insns",
                     "excl insns", "incl ns", "excl ns", "entries", "function");
  writer.Children(root, 0);
}

}  // namespace

std::string CallTreeText(const CallTree& tree, const CallTreeTextOptions& options) {
  TextWriter writer(options, TotalWeight(tree.root(), options.weight));
  WriteTable(tree, options, writer);
  return std::move(writer.out());
}

void WriteCallTreeText(const CallTree& tree, const CallTreeTextOptions& options,
                       std::FILE* file) {
  TextWriter writer(options, TotalWeight(tree.root(), options.weight), file);
  WriteTable(tree, options, writer);
  writer.Flush();
}

nlohmann::json CallTreeJson(const CallTreeNode& node) {
  nlohmann::json children = nlohmann::json::array();
  std::vector<const CallTreeNode*> order;
  PushChildrenByWeight(node, TreeWeight::kInsns, order);
  for (const CallTreeNode* child : order) children.push_back(CallTreeJson(*child));
  return {{"name", node.name},           {"entries", node.entries},
          {"self_insns", node.self_insns}, {"total_insns", node.total_insns},
          {"self_ns", node.self_ns},     {"total_ns", node.total_ns},
          {"children", std::move(children)}};
}

}  // namespace ptprof
