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

TEST_CASE("folded stacks written to a file as they are made are the text, byte for byte") {
  // Deep and wide enough for several megabyte flushes; an unnamed frame on the way.
  CallTree tree;
  CallTreeNode* node = &tree.root();
  for (int depth = 0; depth < 300; ++depth) {
    node = &node->Child(depth == 150 ? std::string() : "frame_" + std::to_string(depth));
    node->self_insns = 1;
    for (int leaf = 0; leaf < 40; ++leaf)
      node->Child("leaf " + std::to_string(leaf)).self_insns = 2;
  }
  tree.Finalize();
  const std::string text = FoldedStacks(tree, TreeWeight::kInsns);
  REQUIRE(text.size() > (size_t{3} << 20));
  CHECK(text.find(";[unknown];frame_151 1\n") != std::string::npos);
  std::FILE* file = std::tmpfile();
  REQUIRE(file != nullptr);
  WriteFoldedStacks(tree, TreeWeight::kInsns, file);
  std::rewind(file);
  std::string written(text.size() + 1, '\0');
  written.resize(std::fread(written.data(), 1, written.size(), file));
  std::fclose(file);
  CHECK(written == text);
}

}  // namespace
}  // namespace ptprof
