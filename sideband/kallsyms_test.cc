#include "sideband/kallsyms.h"

#include <catch2/catch.hpp>

using namespace ptprof;

TEST_CASE("kallsyms lines become bounded text symbols") {
  const char* text =
      "ffffffff81000000 T _stext\r\n"
      "ffffffff81000000 T startup_64\n"
      "ffffffff81000100 t helper\n"
      "ffffffff81000200 t __do_sys_getpid\n"
      "ffffffff81000200 T __ia32_sys_getpid\n"
      "ffffffff81000200 T __x64_sys_getpid\n"
      "ffffffff82000000 D some_data\n"
      "ffffffffc0000000 t mod_fn\t[virtio]\n"
      "garbage line\n";
  auto entries = ParseKallsyms(text, "kallsyms");
  REQUIRE(entries);
  REQUIRE(entries->size() == 8);
  CHECK((*entries)[7].module == "virtio");
  auto symbols = KallsymsTextSymbols(*entries);
  REQUIRE(symbols.size() == 4);
  SymbolTable table;
  for (auto& s : symbols) table.Add(s);
  CHECK(table.Describe(0xffffffff81000010) == "startup_64+0x10");
  CHECK(table.Describe(0xffffffff81000100) == "helper");
  CHECK(table.Describe(0xffffffff81000204) == "__x64_sys_getpid+0x4");
  CHECK(table.Describe(0xffffffffc0000004) == "mod_fn [virtio]+0x4");
  CHECK(table.Describe(0xffffffff80000000).empty());
}

TEST_CASE("kallsyms with hidden addresses or no symbols is an error naming the file") {
  auto hidden = ParseKallsyms("0000000000000000 T _stext\n", "k.txt");
  REQUIRE_FALSE(hidden);
  CHECK(hidden.error().message == "k.txt: no kernel symbols (every address is 0: kptr_restrict hid them)");
  CHECK_FALSE(ParseKallsyms("", "empty"));
}
