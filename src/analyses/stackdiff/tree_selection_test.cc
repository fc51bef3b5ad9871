#include "src/analyses/stackdiff/tree_selection.h"

#include <catch2/catch.hpp>

#include "src/analyses/stackdiff/test_trees.h"

namespace ptprof::stackdiff {
namespace {

using testing::TreeFromLines;

TEST_CASE("the subtrees below every entry of a function are merged under it") {
  CallTree tree = TreeFromLines(
      "main 5 50 1\n"
      "main;read 2 20 2\n"
      "main;read;memcpy 10 100 2\n"
      "main;work 3 30 1\n"
      "main;work;read 4 40 1\n"
      "main;work;read;memcpy 6 60 1\n"
      "main;work;read;read 7 70 1\n");  // recursive: inside the outer read, not counted again
  Subtrees below = SubtreesBelow(tree, "read");
  CHECK(below.positions == 2);
  const CallTreeNode* read = below.tree.Find({"read"});
  REQUIRE(read);
  CHECK(read->entries == 3);
  CHECK(read->self_insns == 6);
  CHECK(read->total_insns == 6 + 16 + 7);
  CHECK(below.tree.Find({"read", "memcpy"})->total_insns == 16);
  CHECK(below.tree.Find({"read", "read"})->total_insns == 7);
  CHECK(below.tree.root().total_ns == 290);
}

TEST_CASE("a C++ function named without its parameters selects every overload") {
  CallTree tree = TreeFromLines(
      "main 5 50 1\n"
      "main;Reader::fill(char*) 2 20 1\n"
      "main;Reader::fill(char*);memcpy 10 100 1\n"
      "main;Reader::fill(int) 3 30 2\n"
      "main;Reader::fill_all() 4 40 1\n");
  Subtrees by_short = SubtreesBelow(tree, "Reader::fill");
  CHECK(by_short.positions == 2);
  const CallTreeNode* fill = by_short.tree.Find({"Reader::fill"});
  REQUIRE(fill);
  CHECK(fill->entries == 3);
  CHECK(fill->total_insns == 2 + 10 + 3);
  Subtrees one = SubtreesBelow(tree, "Reader::fill(int)");
  CHECK(one.positions == 1);
  CHECK(one.tree.root().total_insns == 3);
  CHECK(SubtreesBelow(tree, "Reader::fil").positions == 0);
}

TEST_CASE("a function that never ran selects an empty tree") {
  CallTree tree = TreeFromLines("main 5 50 1\n");
  Subtrees below = SubtreesBelow(tree, "nowhere");
  CHECK(below.positions == 0);
  CHECK(below.tree.root().children.empty());
  CHECK(below.tree.root().total_insns == 0);
}

}  // namespace
}  // namespace ptprof::stackdiff
