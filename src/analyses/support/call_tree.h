// A call tree: which functions ran below which, how often each was entered, and how many
// instructions and nanoseconds each spent by itself and including its callees.
//
// The one tree shape shared by the analyses that build trees (call_stack from a decoded flow,
// syscalls per instance) and the ones that consume them (stacks text/folded/sunburst, stack diffs,
// tracer impact). A node is identified by its name below its parent; the root is nameless.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace ptprof {

struct CallTreeNode {
  std::string name;            // function symbol, or "[unknown]"/"0x..." where no symbol is known
  uint64_t entries = 0;        // times this path was entered (calls, interrupts, syscalls)
  uint64_t self_insns = 0;     // instructions executed in this node itself
  uint64_t self_ns = 0;        // time spent in this node itself
  uint64_t total_insns = 0;    // self plus all descendants (valid after CallTree::Finalize)
  uint64_t total_ns = 0;       // self plus all descendants (valid after CallTree::Finalize)
  CallTreeNode* parent = nullptr;
  std::vector<std::unique_ptr<CallTreeNode>> children;  // in order of first entry

  // The child called `child_name`, created (with zero counts) if it does not exist yet.
  CallTreeNode& Child(std::string_view child_name);
  // The child called `child_name`, or nullptr.
  const CallTreeNode* FindChild(std::string_view child_name) const;
  // Names from the root's child down to this node.
  std::vector<std::string> Path() const;
};

// Adds `from`'s entries and self counts into `into`, and its children's below `into` by name (new
// ones after `into`'s own, in `from`'s order).
void MergeNode(CallTreeNode& into, const CallTreeNode& from);

class CallTree {
 public:
  CallTree();
  CallTree(CallTree&&) noexcept = default;
  CallTree& operator=(CallTree&&) noexcept = default;

  CallTreeNode& root() { return *root_; }
  const CallTreeNode& root() const { return *root_; }

  // Recomputes total_insns/total_ns of every node from the self counts.
  void Finalize();
  // Adds every node of `other` (self counts and entries) into this tree at the same path.
  void Merge(const CallTree& other);
  // Calls `visit` for every node except the root, parents before children.
  void ForEach(const std::function<void(const CallTreeNode&, int depth)>& visit) const;
  // The node at `path` (names from the root's child down), or nullptr.
  const CallTreeNode* Find(const std::vector<std::string>& path) const;

 private:
  std::unique_ptr<CallTreeNode> root_;
};

}  // namespace ptprof
