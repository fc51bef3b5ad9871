#include "src/analyses/stackdiff/stack_diff.h"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

namespace ptprof::stackdiff {

const char* PathChangeName(PathChange change) {
  switch (change) {
    case PathChange::kOnlyInA: return "only-in-A";
    case PathChange::kOnlyInB: return "only-in-B";
    case PathChange::kChanged: return "changed";
    case PathChange::kUnchanged: return "unchanged";
  }
  return "unchanged";
}

namespace {

uint64_t Total(const CallTreeNode& node, Weight weight) {
  return weight == Weight::kNs ? node.total_ns : node.total_insns;
}
uint64_t Self(const CallTreeNode& node, Weight weight) {
  return weight == Weight::kNs ? node.self_ns : node.self_insns;
}

PathSide SideOf(const CallTreeNode* node, Weight weight, uint64_t whole) {
  PathSide side;
  if (!node) return side;
  side.present = true;
  side.entries = node->entries;
  side.total_insns = node->total_insns;
  side.self_insns = node->self_insns;
  side.total_ns = node->total_ns;
  side.self_ns = node->self_ns;
  if (whole) {
    side.share = static_cast<double>(Total(*node, weight)) / static_cast<double>(whole);
    side.self_share = static_cast<double>(Self(*node, weight)) / static_cast<double>(whole);
  }
  return side;
}

class Differ {
 public:
  Differ(const StackDiffOptions& options, StackDiff& out) : options_(options), out_(out) {}

  // Visits the union of the children of `a` and `b` (either may be null): A's order, then B's new ones.
  // `parent`: the index in out_.paths of the path of `a` and `b` (kNoParent: the roots).
  void Children(const CallTreeNode* a, const CallTreeNode* b, size_t parent,
                PathChange parent_change) {
    std::vector<std::string> names;
    if (a) for (const auto& child : a->children) names.push_back(child->name);
    if (b)
      for (const auto& child : b->children)
        if (!a || !a->FindChild(child->name)) names.push_back(child->name);
    for (const std::string& name : names) {
      const CallTreeNode* ca = a ? a->FindChild(name) : nullptr;
      const CallTreeNode* cb = b ? b->FindChild(name) : nullptr;
      PathDiff diff;
      diff.name = name;
      diff.parent = parent;
      diff.a = SideOf(ca, options_.weight, out_.total_a);
      diff.b = SideOf(cb, options_.weight, out_.total_b);
      if (!ca) diff.change = PathChange::kOnlyInB;
      else if (!cb) diff.change = PathChange::kOnlyInA;
      else if (std::fabs(diff.delta_share()) >= options_.changed_threshold) diff.change = PathChange::kChanged;
      else diff.change = PathChange::kUnchanged;
      diff.starts_difference = diff.change == PathChange::kChanged ||
                               (diff.change != PathChange::kUnchanged && diff.change != parent_change);
      out_.overlap += std::min(diff.a.self_share, diff.b.self_share);
      if (ca && cb) {
        shared_self_a_ += Self(*ca, options_.weight);
        shared_self_b_ += Self(*cb, options_.weight);
      }
      Count(diff.change);
      const PathChange change = diff.change;
      const size_t index = out_.paths.size();
      out_.paths.push_back(std::move(diff));
      Children(ca, cb, index, change);
    }
  }

  uint64_t shared_self_a_ = 0, shared_self_b_ = 0;

 private:
  void Count(PathChange change) {
    switch (change) {
      case PathChange::kOnlyInA: ++out_.counts.only_in_a; break;
      case PathChange::kOnlyInB: ++out_.counts.only_in_b; break;
      case PathChange::kChanged: ++out_.counts.changed; break;
      case PathChange::kUnchanged: ++out_.counts.unchanged; break;
    }
  }

  const StackDiffOptions& options_;
  StackDiff& out_;
};

std::vector<OnlyInFunction> OnlyInFunctions(const StackDiff& diff, PathChange change) {
  std::map<std::string, OnlyInFunction> by_name;
  const bool in_a = change == PathChange::kOnlyInA;
  const uint64_t whole = in_a ? diff.total_a : diff.total_b;
  for (const PathDiff& d : diff.paths) {
    if (d.change != change || !d.starts_difference) continue;
    const PathSide& side = in_a ? d.a : d.b;
    OnlyInFunction& f = by_name[d.name];
    f.name = d.name;
    ++f.places;
    f.entries += side.entries;
    f.insns += side.total_insns;
    f.ns += side.total_ns;
  }
  std::vector<OnlyInFunction> out;
  for (auto& [name, f] : by_name) {
    const uint64_t w = diff.weight == Weight::kNs ? f.ns : f.insns;
    f.share = whole ? static_cast<double>(w) / static_cast<double>(whole) : 0;
    out.push_back(std::move(f));
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const OnlyInFunction& x, const OnlyInFunction& y) { return x.share > y.share; });
  return out;
}

}  // namespace

StackDiff DiffTrees(const CallTree& a, const CallTree& b, const StackDiffOptions& options) {
  StackDiff out;
  out.weight = options.weight;
  out.changed_threshold = options.changed_threshold;
  out.total_a = Total(a.root(), options.weight);
  out.total_b = Total(b.root(), options.weight);
  out.insns_a = a.root().total_insns;
  out.insns_b = b.root().total_insns;
  out.ns_a = a.root().total_ns;
  out.ns_b = b.root().total_ns;
  // Weight of the roots themselves (outside any frame) is shared like any path's.
  const uint64_t root_a = Self(a.root(), options.weight), root_b = Self(b.root(), options.weight);
  if (out.total_a && out.total_b)
    out.overlap = std::min(static_cast<double>(root_a) / static_cast<double>(out.total_a),
                           static_cast<double>(root_b) / static_cast<double>(out.total_b));
  Differ differ(options, out);
  differ.Children(&a.root(), &b.root(), kNoParent, PathChange::kUnchanged);
  out.overlap = std::clamp(out.overlap, 0.0, 1.0);
  if (out.total_a)
    out.shared_a = static_cast<double>(differ.shared_self_a_ + root_a) / static_cast<double>(out.total_a);
  if (out.total_b)
    out.shared_b = static_cast<double>(differ.shared_self_b_ + root_b) / static_cast<double>(out.total_b);
  out.only_in_a_functions = OnlyInFunctions(out, PathChange::kOnlyInA);
  out.only_in_b_functions = OnlyInFunctions(out, PathChange::kOnlyInB);
  const char* unit = options.weight == Weight::kNs ? "time" : "instructions";
  if (out.total_a == 0 || out.total_b == 0)
    out.warning = fmt::format("{} has no {} to compare", out.total_a == 0 ? "A" : "B", unit);
  else if (out.shared_a < options.low_overlap && out.shared_b < options.low_overlap)
    out.warning = fmt::format(
        "the two inputs share only {:.1f}% of A's and {:.1f}% of B's {} (on call paths both "
        "have): they look like different programs or different sections, not two runs of the "
        "same code",
        100.0 * out.shared_a, 100.0 * out.shared_b, unit);
  return out;
}

std::vector<std::string> StackDiff::PathOf(const PathDiff& path) const {
  std::vector<const std::string*> names;
  NamesOf(path, names);
  std::vector<std::string> copies;
  copies.reserve(names.size());
  for (const std::string* name : names) copies.push_back(*name);
  return copies;
}

void StackDiff::NamesOf(const PathDiff& path, std::vector<const std::string*>& names) const {
  names.clear();
  for (const PathDiff* at = &path; at; at = at->parent == kNoParent ? nullptr : &paths[at->parent])
    names.push_back(&at->name);
  std::reverse(names.begin(), names.end());
}

std::vector<const PathDiff*> StackDiff::LargestDifferences(size_t top) const {
  std::vector<const PathDiff*> starts;
  for (const PathDiff& diff : paths)
    if (diff.starts_difference) starts.push_back(&diff);
  std::stable_sort(starts.begin(), starts.end(), [](const PathDiff* x, const PathDiff* y) {
    return std::fabs(x->delta_share()) > std::fabs(y->delta_share());
  });
  if (top && starts.size() > top) starts.resize(top);
  return starts;
}

}  // namespace ptprof::stackdiff
