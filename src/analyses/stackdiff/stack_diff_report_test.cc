#include "src/analyses/stackdiff/stack_diff_report.h"

#include <catch2/catch.hpp>

#include "src/analyses/stackdiff/test_trees.h"

namespace ptprof::stackdiff {
namespace {

using testing::TreeFromLines;

TEST_CASE("the text table lists where differences start, largest first") {
  CallTree a = TreeFromLines("entry 20 200 4\nentry;do_sys 80 800 4\n");
  CallTree b = TreeFromLines("entry 20 200 4\nentry;do_sys 80 800 4\nentry;hook 50 900 4\n");
  StackDiff diff = DiffTrees(a, b, {});
  std::string text = StackDiffText(diff, {"a.ptar", "b.ptar"}, 10);
  CHECK(text.find("A: a.ptar: 100 instructions, 1000 ns") != std::string::npos);
  CHECK(text.find("B: b.ptar: 150 instructions, 1900 ns") != std::string::npos);
  CHECK(text.find("on call paths both have: 100.0% of A's instructions, 66.7% of B's (profile "
                  "overlap 66.7%)") != std::string::npos);
  CHECK(text.find("functions starting paths only in B") != std::string::npos);
  CHECK(text.find("  33.33%           50          900         4       1  hook\n") != std::string::npos);
  CHECK(text.find("paths: 0 only in A, 1 only in B, 1 changed share") != std::string::npos);
  const size_t hook = text.find("\nonly-in-B ");
  const size_t changed = text.find("\nchanged ");
  REQUIRE(hook != std::string::npos);
  REQUIRE(changed != std::string::npos);
  CHECK(hook < changed);  // +33.3 points before -26.7
  CHECK(text.find("+33.33%") != std::string::npos);
  CHECK(text.find("entry;hook\n") != std::string::npos);
  CHECK(text.find("warning") == std::string::npos);
}

TEST_CASE("JSON carries every path and the largest ones") {
  CallTree a = TreeFromLines("main 10 0 1\nmain;f 10 0 1\n");
  CallTree b = TreeFromLines("main 10 0 1\nmain;g 10 0 1\n");
  StackDiff diff = DiffTrees(a, b, {});
  nlohmann::json json = StackDiffJson(diff, {"a", "b"}, 1);
  CHECK(json["paths"].size() == 3);
  CHECK(json["largest"].size() == 1);
  CHECK(json["counts"]["only_in_a"] == 1);
  CHECK(json["counts"]["only_in_b"] == 1);
  CHECK(json["overlap"].get<double>() == Approx(0.5));
  CHECK(json["shared_a"].get<double>() == Approx(0.5));
  CHECK(json["only_in_b_functions"][0]["function"] == "g");
  CHECK(json["warning"].is_null());
  CHECK(json["paths"][1]["path"] == nlohmann::json::array({"main", "f"}));
  CHECK(json["paths"][1]["change"] == "only-in-A");
}

}  // namespace
}  // namespace ptprof::stackdiff
