#include "src/report/stack_diff_json_text.h"

#include <catch2/catch.hpp>

#include <cstdio>
#include <string>
#include <utility>

#include "src/analyses/stackdiff/test_trees.h"

namespace ptprof {
namespace {

using stackdiff::DiffTrees;
using stackdiff::StackDiff;
using stackdiff::StackDiffJson;
using testing::TreeFromLines;

// What WriteStackDiffJson writes, read back from a temporary file.
std::string Written(const StackDiff& diff, size_t top) {
  std::FILE* file = std::tmpfile();
  REQUIRE(file != nullptr);
  WriteStackDiffJson(diff, {"a.ptar", "b \"quoted\""}, top, file);
  std::string text(static_cast<size_t>(std::ftell(file)), '\0');
  std::rewind(file);
  REQUIRE(std::fread(text.data(), 1, text.size(), file) == text.size());
  std::fclose(file);
  return text;
}

TEST_CASE("JSON written as it is made is the document's text, byte for byte") {
  const std::pair<const char*, const char*> trees[] = {
      {"main 10 0 1\nmain;f 10 0 1\n", "main 10 0 1\nmain;g 10 0 1\n"},
      // Deeper paths, names with a quote, a backslash and bytes past ASCII, a changed share.
      {"main 10 0 1\nmain;f 30 0 2\nmain;f;caf\xc3\xa9 5 0 1\nmain;q\"\\ 1 0 1\n",
       "main 10 0 1\nmain;f 10 0 2\nmain;f;caf\xc3\xa9 5 0 1\nmain;h 20 0 1\n"},
      // Shares of many digits, a large count, time, and a side not present.
      {"main 7 3 1\nmain;f 11 13 3\nmain;f;g 1000000007 0 1\n",
       "main 3 0 1\nmain;f 2 9 1\nmain;k 18446744073 1 9\n"},
      {"", ""},  // no paths at all
  };
  for (const auto& [lines_a, lines_b] : trees) {
    INFO(lines_a);
    const StackDiff diff = DiffTrees(TreeFromLines(lines_a), TreeFromLines(lines_b), {});
    for (size_t top : {size_t{0}, size_t{1}})
      CHECK(Written(diff, top) ==
            StackDiffJson(diff, {"a.ptar", "b \"quoted\""}, top).dump(1) + "\n");
  }
}

TEST_CASE("JSON with a name that is not UTF-8 is refused before anything is written") {
  const StackDiff diff = DiffTrees(TreeFromLines("main 10 0 1\nmain;bad\xff 5 0 1\n"),
                                   TreeFromLines("main 10 0 1\n"), {});
  std::FILE* file = std::tmpfile();
  REQUIRE(file != nullptr);
  CHECK_THROWS_AS(WriteStackDiffJson(diff, {"a", "b"}, 0, file), nlohmann::json::type_error);
  CHECK(std::ftell(file) == 0);
  std::fclose(file);
}

}  // namespace
}  // namespace ptprof
