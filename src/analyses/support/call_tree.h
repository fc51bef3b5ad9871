// A call tree: which functions ran below which, how often each was entered, and how many
// instructions and nanoseconds each spent by itself and including its callees.
//
// The one tree shape shared by the analyses that build trees (call_stack from a decoded flow,
// syscalls per instance) and the ones that consume them (stacks text/folded/sunburst, stack diffs,
// tracer impact). A node is identified by its name below its parent; the root is nameless.
//
// A tree's nodes live in one arena (CallTreeArena), made in chunks and destroyed together, not
// one allocation each: `ptprof syscalls` on a compiler makes about half a million nodes, and one
// malloc and free per node (and per children vector), on memory faulted in 4 KiB at a time, cost
// about a seventh of its time. A node's children are a list through the nodes themselves.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <iterator>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "src/model/piece_arena.h"

namespace ptprof {

struct CallTreeNode;

// Makes the nodes of one tree and destroys them all when it goes (nodes never go one by one).
class CallTreeArena {
 public:
  CallTreeArena() = default;
  ~CallTreeArena();
  CallTreeArena(const CallTreeArena&) = delete;
  CallTreeArena& operator=(const CallTreeArena&) = delete;

  // A new node with zero counts and no children, owned by the arena.
  CallTreeNode* New();

 private:
  PieceArena<CallTreeNode> nodes_;
};

// A node's children in order of first entry: iterating gives CallTreeNode pointers.
class CallTreeChildren {
 public:
  class iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = CallTreeNode*;
    using difference_type = std::ptrdiff_t;
    using pointer = CallTreeNode* const*;
    using reference = CallTreeNode* const&;
    iterator() = default;
    explicit iterator(CallTreeNode* at) : at_(at) {}
    CallTreeNode* const& operator*() const { return at_; }
    iterator& operator++();
    iterator operator++(int) {
      iterator before = *this;
      ++*this;
      return before;
    }
    bool operator==(const iterator& other) const { return at_ == other.at_; }

   private:
    CallTreeNode* at_ = nullptr;
  };
  iterator begin() const { return iterator(first_); }
  iterator end() const { return iterator(); }
  bool empty() const { return first_ == nullptr; }
  size_t size() const { return size_; }
  CallTreeNode* front() const { return first_; }
  CallTreeNode* back() const { return last_; }

 private:
  friend struct CallTreeNode;
  CallTreeNode* first_ = nullptr;
  CallTreeNode* last_ = nullptr;
  size_t size_ = 0;
};

struct CallTreeNode {
  std::string name;            // function symbol, or "[unknown]"/"0x..." where no symbol is known
  uint64_t entries = 0;        // times this path was entered (calls, interrupts, syscalls)
  uint64_t self_insns = 0;     // instructions executed in this node itself
  uint64_t self_ns = 0;        // time spent in this node itself
  uint64_t total_insns = 0;    // self plus all descendants (valid after CallTree::Finalize)
  uint64_t total_ns = 0;       // self plus all descendants (valid after CallTree::Finalize)
  CallTreeNode* parent = nullptr;
  CallTreeChildren children;  // in order of first entry

  CallTreeNode() = default;
  // Moving a node moves its children's arena with it; its children still name the old node as
  // their parent, so only a node without children is moved (a container's growth).
  CallTreeNode(CallTreeNode&&) noexcept = default;
  CallTreeNode& operator=(CallTreeNode&&) noexcept = default;

  // The child called `child_name`, created (with zero counts) if it does not exist yet.
  CallTreeNode& Child(std::string_view child_name);
  // The child called `child_name`, or nullptr.
  const CallTreeNode* FindChild(std::string_view child_name) const;
  // Names from the root's child down to this node.
  std::vector<std::string> Path() const;

 private:
  friend class CallTreeChildren::iterator;
  friend class CallTreeArena;
  friend class CallTree;
  CallTreeNode* next_sibling_ = nullptr;
  // Where this node's children are made: its tree's arena, or for a node outside any tree (a
  // stand-in of a part) the one it makes for them and owns.
  CallTreeArena* arena_ = nullptr;
  std::unique_ptr<CallTreeArena> own_arena_;
};

inline CallTreeChildren::iterator& CallTreeChildren::iterator::operator++() {
  at_ = at_->next_sibling_;
  return *this;
}

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
  std::unique_ptr<CallTreeNode> root_;  // owns the arena of every node below it
};

}  // namespace ptprof
