#include "src/report/sunburst_html.h"

#include <regex>

#include <catch2/catch.hpp>

#include "src/analyses/stackdiff/test_trees.h"

namespace ptprof {
namespace {

using testing::TreeFromLines;

// The JSON between the data <script> tags, as the page's script reads it.
nlohmann::json EmbeddedData(const std::string& html) {
  const std::string open = "<script type=\"application/json\" id=\"stacks-data\">";
  size_t begin = html.find(open);
  REQUIRE(begin != std::string::npos);
  begin += open.size();
  size_t end = html.find("</script>", begin);
  REQUIRE(end != std::string::npos);
  return nlohmann::json::parse(html.substr(begin, end - begin));
}

TEST_CASE("the sunburst page is self-contained and embeds the tree") {
  CallTree tree = TreeFromLines("entry_SYSCALL_64 10 100 2\nentry_SYSCALL_64;__x64_sys_getpid 5 50 2\n"
                                "main 40 400 1\n");
  SunburstHtmlOptions options;
  options.title = "stacks <of> x";
  options.module_of = [](const CallTreeNode& node) {
    return node.name.rfind("entry", 0) == 0 || node.name.rfind("__x64", 0) == 0 ? "kernel" : "user";
  };
  std::string html = SunburstHtml(tree, options);
  CHECK(html.rfind("<!DOCTYPE html>", 0) == 0);
  CHECK(html.find("<title>stacks &lt;of&gt; x</title>") != std::string::npos);
  CHECK_FALSE(std::regex_search(html, std::regex("(src|href)\\s*=\\s*[\"']?(https?:)?//")));
  nlohmann::json data = EmbeddedData(html);
  CHECK(data["mode"] == "tree");
  CHECK(data["total_insns"] == 55);
  CHECK(data["root"]["i"] == 55);
  CHECK(data["root"]["t"] == 550);
  CHECK(data["modules"] == nlohmann::json::array({"kernel", "user"}));
  const auto& entry = data["root"]["c"][0];
  CHECK(entry["n"] == "entry_SYSCALL_64");
  CHECK(entry["m"] == 0);
  CHECK(entry["e"] == 2);
  CHECK(entry["c"][0]["si"] == 5);
  CHECK(data["root"]["c"][1]["m"] == 1);
}

TEST_CASE("names cannot end the data script early") {
  CallTree tree = TreeFromLines("</script><b> 1 1 1\n");
  std::string html = SunburstHtml(tree, {});
  CHECK(html.find("</script><b>") == std::string::npos);
  CHECK(EmbeddedData(html)["root"]["c"][0]["n"] == "</script><b>");
}

TEST_CASE("the diff page embeds the union with both sides") {
  CallTree a = TreeFromLines("entry 20 200 4\nentry;old 5 50 1\n");
  CallTree b = TreeFromLines("entry 20 200 4\nentry;hook 50 900 4\n");
  SunburstHtmlOptions options;
  options.changed_threshold = 0.02;
  nlohmann::json data = EmbeddedData(SunburstDiffHtml(a, "a.ptar", b, "b.ptar", options));
  CHECK(data["mode"] == "diff");
  CHECK(data["threshold"] == 0.02);
  CHECK(data["a"]["total_insns"] == 25);
  CHECK(data["b"]["total_ns"] == 1100);
  const auto& entry = data["root"]["c"][0];
  CHECK(entry["a"] == nlohmann::json::array({25, 250, 4, 20, 200}));
  CHECK(entry["c"][0]["n"] == "old");
  CHECK(entry["c"][0]["b"].is_null());
  CHECK(entry["c"][1]["n"] == "hook");
  CHECK(entry["c"][1]["a"].is_null());
  CHECK(entry["c"][1]["b"][0] == 50);
}

}  // namespace
}  // namespace ptprof
