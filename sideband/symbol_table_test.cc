#include "sideband/symbol_table.h"

#include <catch2/catch.hpp>

using namespace ptprof;

TEST_CASE("symbols cover their size, labels reach to the end of their segment") {
  SymbolTable t;
  t.Add(Symbol{"main", 0x1000, 0x20, 0x2000});
  t.Add(Symbol{"helper", 0x1040, 0x10, 0x2000});
  t.Add(Symbol{"_start", 0x1100, 0, 0x1200});
  CHECK(t.Describe(0x1000) == "main");
  CHECK(t.Describe(0x1013) == "main+0x13");
  CHECK(t.Describe(0x1020) == "");
  CHECK(t.Describe(0x104f) == "helper+0xf");
  CHECK(t.Describe(0x1105) == "_start+0x5");
  CHECK(t.Describe(0x1200) == "");
  CHECK(t.Describe(0x10) == "");
}

TEST_CASE("a sized symbol wins over a label at the same address") {
  SymbolTable t;
  t.Add(Symbol{"label", 0x1000, 0, 0x2000});
  t.Add(Symbol{"func", 0x1000, 8, 0x2000});
  CHECK(t.Describe(0x1004) == "func+0x4");
  CHECK(t.Describe(0x1010) == "label+0x10");
}

TEST_CASE("FindNamed finds the first symbol of a name in address order") {
  SymbolTable t;
  t.Add(Symbol{"twice", 0x3000, 0x10, 0});
  t.Add(Symbol{"main", 0x1000, 0x20, 0});
  t.Add(Symbol{"twice", 0x2000, 0x10, 0});
  REQUIRE(t.FindNamed("twice"));
  CHECK(t.FindNamed("twice")->address == 0x2000);
  CHECK(t.FindNamed("main")->address == 0x1000);
  CHECK(t.FindNamed("none") == nullptr);
}
