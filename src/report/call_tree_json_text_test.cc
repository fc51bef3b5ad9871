#include "src/report/call_tree_json_text.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "src/analyses/stackdiff/test_trees.h"
#include "src/report/call_tree_text.h"

namespace ptprof {
namespace {

// What `file` holds, from its start.
std::string Contents(std::FILE* file) {
  std::rewind(file);
  std::string text;
  char buffer[1 << 16];
  for (size_t n; (n = std::fread(buffer, 1, sizeof buffer, file)) > 0;) text.append(buffer, n);
  return text;
}

// The document with `tree` as its last member, printed as the document was before.
std::string Printed(const CallTreeNode& root) {
  nlohmann::json document = {{"input", "x.ptar"}, {"blocks", 12}, {"repairs", {{"a", 1}}},
                             {"tree", CallTreeJson(root)}};
  return document.dump(1) + "\n";
}

std::string Written(const CallTreeNode& root) {
  nlohmann::json document = {{"input", "x.ptar"}, {"blocks", 12}, {"repairs", {{"a", 1}}},
                             {"tree", nullptr}};
  std::FILE* file = std::tmpfile();
  REQUIRE(file != nullptr);
  WriteJsonWithTree(document, "tree", root, file);
  std::string text = Contents(file);
  std::fclose(file);
  return text;
}

TEST_CASE("the call tree written as JSON is the printed document, byte for byte") {
  CallTree tree = testing::TreeFromLines(
      "main 10 100 1\nmain;small 1 10 1\nmain;big 60 600 2\nmain;big;leaf 29 290 5\n"
      "main;tie_a 7 0 1\nmain;tie_b 7 0 1\nother 3 3 3\n");
  CHECK(Written(tree.root()) == Printed(tree.root()));
  CallTree empty;
  empty.Finalize();
  CHECK(Written(empty.root()) == Printed(empty.root()));
}

TEST_CASE("names the printer escapes come out as it writes them, deep trees in many flushes") {
  CallTree tree;
  const char* names[] = {"quote\"d", "back\\slash", "ctl\x01", "nl\n", "del\x7f", "caf\xc3\xa9",
                         "", "\xe2\x82\xac", "</script>"};
  CallTreeNode* node = &tree.root();
  for (int depth = 0; depth < 400; ++depth) {
    node = &node->Child(names[depth % 9] + std::to_string(depth));
    node->self_insns = static_cast<uint64_t>(depth);
    for (int leaf = 0; leaf < 8; ++leaf) node->Child("leaf" + std::to_string(leaf)).entries = 1;
  }
  tree.Finalize();
  const std::string printed = Printed(tree.root());
  REQUIRE(printed.size() > (size_t{2} << 20));
  CHECK(Written(tree.root()) == printed);
}

TEST_CASE("a name that is not UTF-8 throws as the printer did, before anything is written") {
  CallTree tree;
  tree.root().Child("ok").Child("bad\xff").self_insns = 1;
  tree.Finalize();
  nlohmann::json document = {{"tree", nullptr}};
  std::FILE* file = std::tmpfile();
  REQUIRE(file != nullptr);
  CHECK_THROWS_AS(WriteJsonWithTree(document, "tree", tree.root(), file),
                  nlohmann::json::type_error);
  CHECK(Contents(file).empty());
  // A document whose last member is not the tree's is the caller's mistake.
  CallTree fine = testing::TreeFromLines("main 1 1 1\n");
  CHECK_THROWS_AS(WriteJsonWithTree({{"tree", nullptr}, {"zzz", 1}}, "tree", fine.root(), file),
                  std::logic_error);
  std::fclose(file);
}

}  // namespace
}  // namespace ptprof
