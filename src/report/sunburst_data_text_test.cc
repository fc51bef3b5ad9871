#include "src/report/sunburst_data_text.h"

#include <catch2/catch.hpp>

#include "src/analyses/stackdiff/test_trees.h"

namespace ptprof {
namespace {

// What the page embedded before SunburstDataText: the document, printed.
std::string Printed(const CallTree& tree, const SunburstHtmlOptions& options) {
  return SunburstData(tree, options).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

TEST_CASE("the sunburst's data text is the printed document, byte for byte") {
  CallTree tree = testing::TreeFromLines(
      "entry_SYSCALL_64 10 100 2\nentry_SYSCALL_64;__x64_sys_getpid 5 50 2\nmain 40 400 1\n"
      "main;f 18446744073709551 3 7\nmain;f;g 0 0 0\n");
  SunburstHtmlOptions options;
  CHECK(SunburstDataText(tree, options) == Printed(tree, options));
  options.title = "stacks of \"x\" </script>";
  options.subtitle = "12 blocks; tab\there";
  options.weight = TreeWeight::kNs;
  options.module_of = [](const CallTreeNode& node) -> std::string {
    if (node.name == "g") return "";  // unknown: no "m"
    return node.name.rfind("entry", 0) == 0 || node.name.rfind("__x64", 0) == 0 ? "kernel"
                                                                                : "libc.so";
  };
  CHECK(SunburstDataText(tree, options) == Printed(tree, options));
}

TEST_CASE("names the printer escapes or repairs come out as it writes them") {
  CallTree tree;
  const char* names[] = {"plain",       "with space",  "quote\"d",    "back\\slash",
                         "ctl\x01\x1f", "nl\n\r\b\f",  "del\x7f",     "caf\xc3\xa9",
                         "bad\xff\xfe", "cut\xc3",     "</script>",   "",
                         "\xe2\x82\xac", "operator<<(std::ostream&, int)"};
  CallTreeNode* parent = &tree.root();
  for (const char* name : names) {
    CallTreeNode& node = parent->Child(name);
    node.self_insns = 1;
    node.entries = 1;
    parent = &node;
    tree.root().Child(std::string(name) + "!").self_insns = 2;
  }
  tree.Finalize();
  SunburstHtmlOptions options;
  options.module_of = [](const CallTreeNode& node) { return node.name.substr(0, 2); };
  CHECK(SunburstDataText(tree, options) == Printed(tree, options));
}

TEST_CASE("an empty tree is printed as the document is") {
  CallTree tree;
  tree.Finalize();
  CHECK(SunburstDataText(tree, {}) == Printed(tree, {}));
}

}  // namespace
}  // namespace ptprof
