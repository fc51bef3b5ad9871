#include "src/analyses/support/call_tree.h"

#include <catch2/catch.hpp>

#include <deque>
#include <string>
#include <vector>

namespace ptprof {
namespace {

TEST_CASE("call tree totals include descendants after Finalize") {
  CallTree tree;
  CallTreeNode& main_fn = tree.root().Child("main");
  main_fn.entries = 1;
  main_fn.self_insns = 10;
  main_fn.self_ns = 100;
  CallTreeNode& leaf = main_fn.Child("leaf");
  leaf.entries = 3;
  leaf.self_insns = 5;
  leaf.self_ns = 7;
  REQUIRE(&main_fn.Child("leaf") == &leaf);
  tree.Finalize();
  CHECK(main_fn.total_insns == 15);
  CHECK(main_fn.total_ns == 107);
  CHECK(tree.root().total_insns == 15);
  CHECK(leaf.Path() == std::vector<std::string>{"main", "leaf"});
  CHECK(tree.Find({"main", "leaf"}) == &leaf);
  CHECK(tree.Find({"main", "other"}) == nullptr);
}

TEST_CASE("merging adds counts path by path and visits parents first") {
  CallTree a;
  a.root().Child("f").self_insns = 1;
  CallTree b;
  b.root().Child("f").self_insns = 2;
  b.root().Child("f").Child("g").self_insns = 4;
  a.Merge(b);
  CHECK(a.Find({"f"})->self_insns == 3);
  CHECK(a.Find({"f"})->total_insns == 7);
  std::vector<std::pair<std::string, int>> order;
  a.ForEach([&](const CallTreeNode& node, int depth) { order.emplace_back(node.name, depth); });
  CHECK(order == std::vector<std::pair<std::string, int>>{{"f", 0}, {"g", 1}});
}

}  // namespace
}  // namespace ptprof

namespace ptprof {
namespace {

TEST_CASE("a tree's nodes come from its arena, children listed in order of first entry") {
  CallTree tree;
  CallTreeNode& main_fn = tree.root().Child("main");
  // Enough children to fill several chunks, with names longer than a short string holds.
  std::vector<CallTreeNode*> made;
  for (int i = 0; i < 1000; ++i)
    made.push_back(&main_fn.Child("a_function_name_longer_than_sixteen_" + std::to_string(i)));
  CHECK(main_fn.children.size() == 1000);
  size_t k = 0;
  for (CallTreeNode* child : main_fn.children) {
    REQUIRE(k < made.size());
    CHECK(child == made[k]);
    CHECK(child->parent == &main_fn);
    CHECK(child->name == "a_function_name_longer_than_sixteen_" + std::to_string(k));
    ++k;
  }
  CHECK(k == 1000);
  CHECK(main_fn.children.front() == made.front());
  CHECK(main_fn.children.back() == made.back());
  // Asking again finds the same node; nodes stay where they were made.
  CHECK(&main_fn.Child("a_function_name_longer_than_sixteen_7") == made[7]);
  made[999]->Child("leaf").self_insns = 5;
  tree.Finalize();
  CHECK(tree.root().total_insns == 5);
  // A moved tree keeps its nodes.
  CallTree moved = std::move(tree);
  CHECK(moved.Find({"main", "a_function_name_longer_than_sixteen_999", "leaf"}) != nullptr);
}

TEST_CASE("a node outside any tree makes its own arena for its children") {
  std::deque<CallTreeNode> stand_ins(3);
  stand_ins[0].parent = &stand_ins[1];
  CallTreeNode& callee = stand_ins[0].Child("callee");
  callee.Child("deeper").entries = 2;
  CHECK(callee.parent == &stand_ins[0]);
  CHECK(stand_ins[0].children.size() == 1);
  CHECK(stand_ins[1].children.empty());
  CallTree tree;
  MergeNode(tree.root().Child("real"), stand_ins[0]);
  const CallTreeNode* deeper = tree.Find({"real", "callee", "deeper"});
  REQUIRE(deeper != nullptr);
  CHECK(deeper->entries == 2);
}

}  // namespace
}  // namespace ptprof
