#include "src/report/call_tree_text.h"

#include <catch2/catch.hpp>

#include "src/analyses/stackdiff/test_trees.h"

namespace ptprof {
namespace {

using testing::TreeFromLines;

const char* kTree =
    "main 10 100 1\n"
    "main;small 1 10 1\n"
    "main;big 60 600 2\n"
    "main;big;leaf 29 290 5\n";

TEST_CASE("the text tree shows every path, heavier children first, indented") {
  CallTree tree = TreeFromLines(kTree);
  CallTreeTextOptions options;
  options.title = "stacks of x";
  std::string text = CallTreeText(tree, options);
  CHECK(text.rfind("stacks of x\ntotal: 100 instructions, 1000 ns, 1 entries at the top, 4 paths\n", 0) == 0);
  CHECK(text.find(" 100.00%          100           10         1000          100         1  main\n") !=
        std::string::npos);
  CHECK(text.find("  89.00%           89           60          890          600         2    big\n") !=
        std::string::npos);
  CHECK(text.find("      leaf\n") != std::string::npos);
  CHECK(text.find("big") < text.find("small"));
}

TEST_CASE("min-share and depth prune into one summary line per parent") {
  CallTree tree = TreeFromLines(kTree);
  CallTreeTextOptions options;
  options.min_share = 5;
  std::string text = CallTreeText(tree, options);
  CHECK(text.find("small") == std::string::npos);
  CHECK(text.find("more below") == std::string::npos);  // 1% of pruned paths: not worth a line
  options.min_share = 0.5;
  CHECK(CallTreeText(tree, options).find("small") != std::string::npos);
  CallTree wide = TreeFromLines("main 10 0 1\nmain;a 3 0 1\nmain;b 3 0 1\nmain;c 3 0 1\nmain;big 81 0 1\n");
  options.min_share = 5;
  text = CallTreeText(wide, options);
  CHECK(text.find("   9.00%") != std::string::npos);
  CHECK(text.find("(3 more below --min-share)") != std::string::npos);

  options.min_share = 0;
  options.max_depth = 2;
  text = CallTreeText(tree, options);
  CHECK(text.find("leaf") == std::string::npos);
  CHECK(text.find("(1 more below --depth)") != std::string::npos);
}

TEST_CASE("a count wider than its column is shown whole; equal children keep their order") {
  CallTree tree = TreeFromLines("main 12345678901234 1 1\nmain;b 5 0 1\nmain;a 5 0 1\n");
  const std::string text = CallTreeText(tree, CallTreeTextOptions{});
  const std::string main_line =
      " 100.00% 12345678901244 12345678901234            1            1         1  main\n";
  CHECK(text.find(main_line) != std::string::npos);
  CHECK(text.find("    b\n") < text.find("    a\n"));  // first entered, first shown
}

TEST_CASE("time can be the share") {
  CallTree tree = TreeFromLines("a 10 900 1\nb 90 100 1\n");
  CallTreeTextOptions options;
  options.weight = TreeWeight::kNs;
  std::string text = CallTreeText(tree, options);
  CHECK(text.find("  90.00%           10") != std::string::npos);
  CHECK(text.find("  a\n") < text.find("  b\n"));
}

TEST_CASE("the JSON tree keeps every count, heaviest child first") {
  CallTree tree = TreeFromLines(kTree);
  nlohmann::json json = CallTreeJson(tree.root());
  CHECK(json["total_insns"] == 100);
  CHECK(json["total_ns"] == 1000);
  const auto& main = json["children"][0];
  CHECK(main["name"] == "main");
  CHECK(main["self_insns"] == 10);
  CHECK(main["children"][0]["name"] == "big");
  CHECK(main["children"][0]["children"][0]["entries"] == 5);
}

TEST_CASE("weights parse by name") {
  TreeWeight weight = TreeWeight::kInsns;
  CHECK(ParseTreeWeight("ns", weight));
  CHECK(weight == TreeWeight::kNs);
  CHECK_FALSE(ParseTreeWeight("cycles", weight));
}

}  // namespace
TEST_CASE("the table written to a file as it is made is the text, byte for byte") {
  // 20,000 paths: about 2 MB of table, written a megabyte at a time.
  std::string lines = "main 10 100 1\n";
  for (int i = 0; i < 20000; ++i)
    lines += "main;function_" + std::to_string(i) + " " + std::to_string(1 + i % 7) + " 0 1\n";
  CallTree tree = TreeFromLines(lines);
  CallTreeTextOptions options;
  options.title = "stacks of many";
  const std::string text = CallTreeText(tree, options);
  REQUIRE(text.size() > (size_t{3} << 19));
  std::FILE* file = std::tmpfile();
  REQUIRE(file);
  WriteCallTreeText(tree, options, file);
  std::string written(static_cast<size_t>(std::ftell(file)), '\0');
  std::rewind(file);
  CHECK(std::fread(written.data(), 1, written.size(), file) == written.size());
  std::fclose(file);
  CHECK(written == text);
}

}  // namespace ptprof
