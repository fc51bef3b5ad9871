#include "src/analyses/support/call_tree.h"

#include <algorithm>
#include <new>

namespace ptprof {

namespace {

constexpr size_t kFirstChunkNodes = 16;  // a syscall's small kernel tree takes one chunk
// About 60 KiB: under malloc's mmap threshold (128 KiB), so a chunk reuses freed heap rather than
// fresh pages.
constexpr size_t kLargestHeapChunkNodes = 512;
// Past this many nodes, chunks are whole huge-page slabs.
constexpr size_t kHeapNodes = 4096;
constexpr size_t kSlabNodes = HugeSlabs::kSlabBytes / sizeof(CallTreeNode);

}  // namespace

CallTreeArena::~CallTreeArena() {
  for (Chunk& chunk : chunks_) {
    auto* nodes = reinterpret_cast<CallTreeNode*>(chunk.memory);
    for (size_t i = 0; i < chunk.used; ++i) nodes[i].~CallTreeNode();
    if (chunk.on_heap) delete[] chunk.memory;
  }
}  // slabs_ goes after

CallTreeNode* CallTreeArena::New() {
  if (chunks_.empty() || chunks_.back().used == chunks_.back().capacity) {
    chunks_.reserve(chunks_.size() + 1);  // first, so that nothing leaks if it throws
    Chunk chunk;
    if (size_ < kHeapNodes) {
      chunk.capacity = chunks_.empty()
                           ? kFirstChunkNodes
                           : std::min(chunks_.back().capacity * 2, kLargestHeapChunkNodes);
      // operator new[] of std::byte is aligned for any fundamental type, and a node is no more.
      static_assert(alignof(CallTreeNode) <= __STDCPP_DEFAULT_NEW_ALIGNMENT__);
      chunk.memory = new std::byte[chunk.capacity * sizeof(CallTreeNode)];
      chunk.on_heap = true;
    } else {
      if (!slabs_) slabs_ = std::make_unique<HugeSlabs>();
      chunk.capacity = kSlabNodes;
      chunk.memory = static_cast<std::byte*>(
          slabs_->Carve(kSlabNodes * sizeof(CallTreeNode), alignof(CallTreeNode)));
    }
    chunks_.push_back(chunk);
  }
  Chunk& chunk = chunks_.back();
  auto* node = new (chunk.memory + chunk.used * sizeof(CallTreeNode)) CallTreeNode();
  chunk.used += 1;
  size_ += 1;
  node->arena_ = this;
  return node;
}

CallTreeNode& CallTreeNode::Child(std::string_view child_name) {
  for (CallTreeNode* child : children) {
    if (child->name == child_name) return *child;
  }
  if (!arena_) {
    own_arena_ = std::make_unique<CallTreeArena>();
    arena_ = own_arena_.get();
  }
  CallTreeNode* node = arena_->New();
  node->name = std::string(child_name);
  node->parent = this;
  if (children.last_)
    children.last_->next_sibling_ = node;
  else
    children.first_ = node;
  children.last_ = node;
  children.size_ += 1;
  return *node;
}

const CallTreeNode* CallTreeNode::FindChild(std::string_view child_name) const {
  for (const CallTreeNode* child : children) {
    if (child->name == child_name) return child;
  }
  return nullptr;
}

std::vector<std::string> CallTreeNode::Path() const {
  std::vector<std::string> path;
  for (const CallTreeNode* node = this; node->parent != nullptr; node = node->parent) {
    path.push_back(node->name);
  }
  std::reverse(path.begin(), path.end());
  return path;
}

void MergeNode(CallTreeNode& into, const CallTreeNode& from) {
  into.entries += from.entries;
  into.self_insns += from.self_insns;
  into.self_ns += from.self_ns;
  for (const CallTreeNode* child : from.children) MergeNode(into.Child(child->name), *child);
}

CallTree::CallTree() : root_(std::make_unique<CallTreeNode>()) {
  root_->own_arena_ = std::make_unique<CallTreeArena>();
  root_->arena_ = root_->own_arena_.get();
}

namespace {

void FinalizeNode(CallTreeNode& node) {
  node.total_insns = node.self_insns;
  node.total_ns = node.self_ns;
  for (CallTreeNode* child : node.children) {
    FinalizeNode(*child);
    node.total_insns += child->total_insns;
    node.total_ns += child->total_ns;
  }
}

void VisitNode(const CallTreeNode& node, int depth,
               const std::function<void(const CallTreeNode&, int)>& visit) {
  for (const CallTreeNode* child : node.children) {
    visit(*child, depth);
    VisitNode(*child, depth + 1, visit);
  }
}

}  // namespace

void CallTree::Finalize() { FinalizeNode(*root_); }

void CallTree::Merge(const CallTree& other) {
  MergeNode(*root_, other.root());
  Finalize();
}

void CallTree::ForEach(const std::function<void(const CallTreeNode&, int depth)>& visit) const {
  VisitNode(*root_, 0, visit);
}

const CallTreeNode* CallTree::Find(const std::vector<std::string>& path) const {
  const CallTreeNode* node = root_.get();
  for (const auto& name : path) {
    node = node->FindChild(name);
    if (node == nullptr) return nullptr;
  }
  return node;
}

}  // namespace ptprof
