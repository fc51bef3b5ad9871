#include "src/analyses/stackdiff/stack_diff.h"

#include <catch2/catch.hpp>

#include "src/analyses/stackdiff/test_trees.h"

namespace ptprof::stackdiff {
namespace {

using testing::TreeFromLines;

const PathDiff* FindPath(const StackDiff& diff, const std::vector<std::string>& path) {
  for (const PathDiff& d : diff.paths)
    if (diff.PathOf(d) == path) return &d;
  return nullptr;
}

TEST_CASE("identical trees share everything and nothing changes") {
  const std::string lines = "main 10 100 1\nmain;f 30 300 3\nmain;g 60 600 2\n";
  CallTree a = TreeFromLines(lines), b = TreeFromLines(lines);
  StackDiff diff = DiffTrees(a, b, {});
  CHECK(diff.shared_a == Approx(1.0));
  CHECK(diff.shared_b == Approx(1.0));
  CHECK(diff.overlap == Approx(1.0));
  CHECK(diff.counts.unchanged == 3);
  CHECK(diff.counts.changed + diff.counts.only_in_a + diff.counts.only_in_b == 0);
  CHECK_FALSE(diff.warning);
  CHECK(diff.LargestDifferences(10).empty());
}

TEST_CASE("a tracer's added call is only in B, its callers' shares shrink") {
  // B: every syscall also runs a tracer hook of 50 instructions with a callee of 20.
  CallTree a = TreeFromLines("entry 20 0 4\nentry;do_sys 80 0 4\n");
  CallTree b = TreeFromLines(
      "entry 20 0 4\nentry;do_sys 80 0 4\nentry;hook 30 0 4\nentry;hook;hook_inner 20 0 4\n");
  StackDiff diff = DiffTrees(a, b, {});
  CHECK(diff.total_a == 100);
  CHECK(diff.total_b == 150);
  CHECK(diff.counts.only_in_b == 2);
  CHECK(diff.counts.only_in_a == 0);

  const PathDiff* hook = FindPath(diff, {"entry", "hook"});
  REQUIRE(hook);
  CHECK(hook->change == PathChange::kOnlyInB);
  CHECK(hook->starts_difference);
  CHECK(hook->b.total_insns == 50);
  CHECK(hook->b.share == Approx(50.0 / 150));
  const PathDiff* inner = FindPath(diff, {"entry", "hook", "hook_inner"});
  REQUIRE(inner);
  CHECK(inner->change == PathChange::kOnlyInB);
  CHECK_FALSE(inner->starts_difference);  // part of hook's subtree

  const PathDiff* do_sys = FindPath(diff, {"entry", "do_sys"});
  REQUIRE(do_sys);
  CHECK(do_sys->change == PathChange::kChanged);  // 80% -> 53.3%
  CHECK(do_sys->delta_share() == Approx(80.0 / 150 - 0.8));
  // entry is 100% of both trees: unchanged.
  CHECK(FindPath(diff, {"entry"})->change == PathChange::kUnchanged);

  // Overlap: min(20/100, 20/150) + min(80/100, 80/150).
  CHECK(diff.overlap == Approx(100.0 / 150));
  CHECK(diff.shared_a == Approx(1.0));          // every path of A is in B
  CHECK(diff.shared_b == Approx(100.0 / 150));  // the hook's 50 are not in A
  CHECK_FALSE(diff.warning);
  REQUIRE(diff.only_in_b_functions.size() == 1);
  CHECK(diff.only_in_b_functions[0].name == "hook");
  CHECK(diff.only_in_b_functions[0].insns == 50);
  CHECK(diff.only_in_b_functions[0].places == 1);
  auto largest = diff.LargestDifferences(1);
  REQUIRE(largest.size() == 1);
  CHECK(diff.PathOf(*largest[0]) == std::vector<std::string>{"entry", "hook"});
}

TEST_CASE("a path only in A is classified and counted once per subtree") {
  CallTree a = TreeFromLines("main 10 0 1\nmain;old 10 0 1\nmain;old;leaf 10 0 1\n");
  CallTree b = TreeFromLines("main 30 0 1\n");
  StackDiff diff = DiffTrees(a, b, {});
  CHECK(diff.counts.only_in_a == 2);
  auto largest = diff.LargestDifferences(0);
  REQUIRE(largest.size() == 1);
  CHECK(diff.PathOf(*largest[0]) == std::vector<std::string>{"main", "old"});
  CHECK(largest[0]->delta_share() == Approx(-2.0 / 3));
}

TEST_CASE("different programs share little and get a warning saying how little") {
  CallTree a = TreeFromLines("main 5 0 1\nmain;parse 95 0 1\n");
  CallTree b = TreeFromLines("main 5 0 1\nmain;compress 95 0 1\n");
  StackDiff diff = DiffTrees(a, b, {});
  CHECK(diff.overlap == Approx(0.05));
  CHECK(diff.shared_a == Approx(0.05));
  CHECK(diff.shared_b == Approx(0.05));
  REQUIRE(diff.warning);
  CHECK(diff.warning->find("share only 5.0% of A's and 5.0% of B's") != std::string::npos);
}

TEST_CASE("a hook below every function is summed over the places it starts") {
  CallTree a = TreeFromLines("main 10 0 1\nmain;f 10 0 1\nmain;g 10 0 1\n");
  CallTree b = TreeFromLines("main 10 0 1\nmain;hook 5 0 1\nmain;f 10 0 1\nmain;f;hook 5 0 2\n"
                             "main;g 10 0 1\nmain;g;hook 5 0 3\n");
  StackDiff diff = DiffTrees(a, b, {});
  REQUIRE(diff.only_in_b_functions.size() == 1);
  const OnlyInFunction& hook = diff.only_in_b_functions[0];
  CHECK(hook.places == 3);
  CHECK(hook.entries == 6);
  CHECK(hook.insns == 15);
  CHECK(hook.share == Approx(15.0 / 45));
  CHECK(diff.only_in_a_functions.empty());
}

TEST_CASE("the weight can be time, and the threshold decides what changed") {
  CallTree a = TreeFromLines("main 50 500 1\nmain;f 50 500 1\n");
  CallTree b = TreeFromLines("main 50 520 1\nmain;f 50 480 1\n");
  StackDiffOptions options;
  options.weight = Weight::kInsns;
  CHECK(DiffTrees(a, b, options).counts.changed == 0);
  options.weight = Weight::kNs;
  CHECK(DiffTrees(a, b, options).counts.changed == 1);  // f: 50% -> 48% of the time
  options.changed_threshold = 0.05;
  CHECK(DiffTrees(a, b, options).counts.changed == 0);
}

TEST_CASE("an empty side is a warning, not a division by zero") {
  CallTree a = TreeFromLines("main 10 0 1\n");
  CallTree b;
  b.Finalize();
  StackDiff diff = DiffTrees(a, b, {});
  REQUIRE(diff.warning);
  CHECK(diff.warning->find("B has no instructions") != std::string::npos);
  CHECK(diff.counts.only_in_a == 1);
}

}  // namespace
}  // namespace ptprof::stackdiff
