#include "src/analyses/support/call_tree.h"

#include <algorithm>
#include <new>

namespace ptprof {

CallTreeArena::~CallTreeArena() {
  nodes_.ForEach([](CallTreeNode* node) { node->~CallTreeNode(); });
}

CallTreeNode* CallTreeArena::New() {
  auto* node = new (nodes_.Allocate()) CallTreeNode();
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
