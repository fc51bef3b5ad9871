#include "src/report/folded_stacks.h"

#include <sstream>

#include <catch2/catch.hpp>

#include "src/analyses/stackdiff/test_trees.h"

namespace ptprof {
namespace {

using testing::TreeFromLines;

TEST_CASE("folded stacks: one line per path with weight of its own, adding up to the total") {
  CallTree tree = TreeFromLines("main 10 100 1\nmain;f 0 5 1\nmain;f;g 30 300 2\nmain;h 60 600 1\n");
  std::string folded = FoldedStacks(tree, TreeWeight::kInsns);
  CHECK(folded == "main 10\nmain;f;g 30\nmain;h 60\n");
  std::string by_time = FoldedStacks(tree, TreeWeight::kNs);
  CHECK(by_time == "main 100\nmain;f 5\nmain;f;g 300\nmain;h 600\n");
  uint64_t sum = 0;
  std::istringstream in(by_time);
  std::string line;
  while (std::getline(in, line)) sum += std::stoull(line.substr(line.rfind(' ') + 1));
  CHECK(sum == tree.root().total_ns);
}

TEST_CASE("frame names cannot break the format") {
  CallTree tree;
  tree.root().Child("operator new(unsigned long)").Child("a;b").self_insns = 3;
  tree.root().self_insns = 2;
  tree.Finalize();
  CHECK(FoldedStacks(tree, TreeWeight::kInsns) ==
        "[outside] 2\noperator_new(unsigned_long);a:b 3\n");
}

}  // namespace
}  // namespace ptprof
