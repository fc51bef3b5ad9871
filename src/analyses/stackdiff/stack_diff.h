#pragma once
// StackDiff answers "what changed between two executions of the same code?": it walks the union
// of the call paths of two call trees (A, the baseline, and B) and, per path, puts the entries,
// instructions and time of both side by side with their shares of each tree, and classifies the
// path as only in A, only in B, changed share (by at least a threshold) or unchanged. It also says
// how much of the two trees is shared by weight: the sum over paths of the smaller of the two
// exclusive shares (1 for identical profiles, 0 for disjoint ones), so that two different programs
// can be told apart from two runs of one program.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "src/analyses/support/call_tree.h"

namespace ptprof::stackdiff {

enum class Weight { kInsns, kNs };
enum class PathChange { kOnlyInA, kOnlyInB, kChanged, kUnchanged };

const char* PathChangeName(PathChange change);  // "only-in-A", "only-in-B", "changed", "unchanged"

// One tree's numbers for a path (all zero when the path is not in that tree).
struct PathSide {
  bool present = false;
  uint64_t entries = 0;
  uint64_t total_insns = 0, self_insns = 0;
  uint64_t total_ns = 0, self_ns = 0;
  double share = 0;       // inclusive weight / the tree's total weight, 0..1
  double self_share = 0;  // exclusive weight / the tree's total weight
};

// A path's place in StackDiff::paths for a child of the roots, which has no parent path.
inline constexpr size_t kNoParent = SIZE_MAX;

struct PathDiff {
  // The path is its parent's with `name` added (StackDiff::PathOf spells it out): a path is not
  // kept whole, which for a compiler's 300 K paths hundreds of frames deep was tens of millions
  // of copied names.
  std::string name;
  size_t parent = kNoParent;  // the parent path's index in StackDiff::paths
  PathSide a, b;
  PathChange change = PathChange::kUnchanged;
  // Whether this path is where a difference starts: an only-in path whose parent is in both trees
  // (its descendants share its class and are not repeated in the table), or any changed path.
  bool starts_difference = false;
  double delta_share() const { return b.share - a.share; }
};

struct StackDiffOptions {
  Weight weight = Weight::kInsns;
  double changed_threshold = 0.01;  // |share B - share A| at or above this is "changed" (0..1)
  double low_overlap = 0.20;        // both shared fractions below this: a warning
};

// A function that starts paths only one tree has, summed over every place it starts.
struct OnlyInFunction {
  std::string name;
  size_t places = 0;      // paths where it starts a difference
  uint64_t entries = 0;
  uint64_t insns = 0, ns = 0;  // inclusive, summed over the places
  double share = 0;       // of its tree's total weight
};

struct StackDiffCounts {
  size_t only_in_a = 0, only_in_b = 0, changed = 0, unchanged = 0;
};

struct StackDiff {
  Weight weight = Weight::kInsns;
  double changed_threshold = 0;
  uint64_t total_a = 0, total_b = 0;  // the trees' total weight
  uint64_t insns_a = 0, insns_b = 0, ns_a = 0, ns_b = 0;
  double shared_a = 0;                // A's exclusive weight on paths B has too, 0..1
  double shared_b = 0;                // B's exclusive weight on paths A has too, 0..1
  double overlap = 0;                 // sum over paths of the smaller exclusive share, 0..1
  StackDiffCounts counts;
  std::vector<PathDiff> paths;        // the union, parents before children
  std::optional<std::string> warning; // set when both trees share less than options.low_overlap
  std::vector<OnlyInFunction> only_in_a_functions, only_in_b_functions;  // heaviest first

  // Names from the root's child down to `path` (one of `paths`).
  std::vector<std::string> PathOf(const PathDiff& path) const;
  // The same names where they are, in `names` (emptied first): for a writer of every path.
  void NamesOf(const PathDiff& path, std::vector<const std::string*>& names) const;
  // The paths where differences start, largest |delta share| first, at most `top` (0: all).
  std::vector<const PathDiff*> LargestDifferences(size_t top) const;
};

// Both trees must be finalized (totals valid).
StackDiff DiffTrees(const CallTree& a, const CallTree& b, const StackDiffOptions& options);

}  // namespace ptprof::stackdiff
