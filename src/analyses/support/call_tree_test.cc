#include "src/analyses/support/call_tree.h"

#include <catch2/catch.hpp>

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
