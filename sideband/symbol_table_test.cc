#include "sideband/symbol_table.h"

#include <catch2/catch.hpp>

#include <random>
#include <thread>
#include <string>
#include <vector>

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

TEST_CASE("AddAll adds as Add does, into an empty table and after symbols already there") {
  SymbolTable one_by_one, at_once;
  std::vector<Symbol> first = {{"a_long_function_name_one", 0x1000, 0x10, 0x9000},
                               {"b", 0x1010, 0x10, 0x9000}};
  std::vector<Symbol> second = {{"c", 0x2000, 0, 0x2100}, {"a_long_function_name_two", 0x3000, 8, 0x9000}};
  for (const auto& s : first) one_by_one.Add(s);
  for (const auto& s : second) one_by_one.Add(s);
  at_once.AddAll(first);
  at_once.AddAll({});
  at_once.AddAll(second);
  REQUIRE(at_once.size() == 4);
  for (uint64_t address : {0x1000ull, 0x1015ull, 0x2050ull, 0x3004ull, 0x3008ull, 0x10ull})
    CHECK(at_once.Describe(address) == one_by_one.Describe(address));
  CHECK(at_once.Describe(0x3004) == "a_long_function_name_two+0x4");
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

TEST_CASE("Find's index gives the walk's answer at every address") {
  std::mt19937_64 random(5);
  auto pick = [&](uint64_t n) { return std::uniform_int_distribution<uint64_t>(0, n - 1)(random); };
  for (int table = 0; table < 40; ++table) {
    SymbolTable t;
    std::vector<uint64_t> probes = {0, UINT64_MAX};
    const size_t count = 1 + pick(table < 20 ? 12 : 400);
    for (size_t i = 0; i < count; ++i) {
      // Dense, nested and overlapping symbols, labels, shared starts, and some at the top.
      const uint64_t address = pick(10) == 0 ? UINT64_MAX - pick(0x40) : 0x1000 + pick(0x800);
      const uint64_t size = pick(3) == 0 ? 0 : 1 + pick(0x100);
      const uint64_t limit = pick(4) == 0 ? 0 : address + pick(0x400);
      t.Add(Symbol{"s" + std::to_string(i), address, size, limit});
      for (const uint64_t at : {address, address + size, limit})
        for (const uint64_t near : {at - 1, at, at + 1}) probes.push_back(near);
    }
    for (int i = 0; i < 2000; ++i) probes.push_back(0xf00 + pick(0xc00));
    const SymbolTable copy = t;
    for (const uint64_t address : probes) {
      INFO("table " << table << " address " << address);
      CHECK(t.Find(address) == t.FindByWalk(address));
      const Symbol* in_copy = copy.Find(address);
      const Symbol* walked = t.FindByWalk(address);
      CHECK((in_copy ? in_copy->name : "-") == (walked ? walked->name : "-"));
    }
  }
}

TEST_CASE("outputs show C++ names demangled; matching keeps the linkage name") {
  SymbolTable t;
  t.Add(Symbol{"_Z18reg_class_subset_pii", 0x1000, 0x20, 0});
  t.Add(Symbol{"main", 0x2000, 0x20, 0});
  t.Add(Symbol{"_Zbroken", 0x3000, 0x20, 0});
  CHECK(t.Describe(0x1000) == "reg_class_subset_p(int, int)");
  CHECK(t.Describe(0x1013) == "reg_class_subset_p(int, int)+0x13");
  CHECK(t.Describe(0x2004) == "main+0x4");
  CHECK(t.Describe(0x3000) == "_Zbroken");  // does not demangle: as it is
  const Symbol* found = t.Find(0x1004);
  REQUIRE(found != nullptr);
  CHECK(found->name == "_Z18reg_class_subset_pii");
  // The same string each time it is asked for.
  CHECK(&t.ShownName(*found) == &t.ShownName(*found));
  CHECK(t.FindNamed("_Z18reg_class_subset_pii") == found);
  CHECK(t.FindNamed("reg_class_subset_p(int, int)") == nullptr);

  // Symbols added after a lookup: shown again from the sorted table.
  t.Add(Symbol{"_ZN2wi3fooEv", 0x500, 0x10, 0});
  CHECK(t.Describe(0x504) == "wi::foo()+0x4");
  CHECK(t.Describe(0x1000) == "reg_class_subset_p(int, int)");

  // A copy shows the same names, from names of its own.
  const SymbolTable copy = t;
  CHECK(copy.Describe(0x1001) == "reg_class_subset_p(int, int)+0x1");
  CHECK(&copy.ShownName(*copy.Find(0x1000)) != &t.ShownName(*t.Find(0x1000)));
}

TEST_CASE("a moved table keeps its symbols where they were, with the names shown so far") {
  SymbolTable t;
  t.Add(Symbol{"_Z18reg_class_subset_pii", 0x1000, 0x20, 0});
  t.Add(Symbol{"main", 0x2000, 0x20, 0});
  const Symbol* found = t.Find(0x1004);
  REQUIRE(found != nullptr);
  const std::string* shown = &t.ShownName(*found);
  SymbolTable moved = std::move(t);
  CHECK(moved.size() == 2);
  CHECK(moved.Find(0x1004) == found);  // the same symbol, in the same place
  CHECK(&moved.ShownName(*found) == shown);
  CHECK(moved.Describe(0x2001) == "main+0x1");
  // The table moved from is empty, and can be filled again.
  CHECK(t.size() == 0);
  CHECK(t.Find(0x1004) == nullptr);
  t.Add(Symbol{"_ZN2wi3fooEv", 0x500, 0x10, 0});
  CHECK(t.Describe(0x504) == "wi::foo()+0x4");
  // Assigned over a table that had shown names of its own.
  moved = std::move(t);
  CHECK(moved.size() == 1);
  CHECK(moved.Describe(0x500) == "wi::foo()");
  CHECK(moved.Find(0x1004) == nullptr);
}

TEST_CASE("threads asking for a symbol's shown name at once get one name") {
  SymbolTable t;
  for (uint64_t i = 0; i < 64; ++i)
    t.Add(Symbol{"_ZN2ns" + std::to_string(std::to_string(i).size() + 1) + "f" +
                     std::to_string(i) + "Ev",
                 0x1000 + 0x10 * i, 0x10, 0});
  std::vector<std::vector<const std::string*>> seen(4);
  std::vector<std::thread> threads;
  for (size_t k = 0; k < seen.size(); ++k)
    threads.emplace_back([&t, &out = seen[k]] {
      for (uint64_t i = 0; i < 64; ++i) out.push_back(&t.ShownName(*t.Find(0x1000 + 0x10 * i)));
    });
  for (std::thread& thread : threads) thread.join();
  for (uint64_t i = 0; i < 64; ++i) {
    CHECK(*seen[0][i] == "ns::f" + std::to_string(i) + "()");
    for (size_t k = 1; k < seen.size(); ++k) CHECK(seen[k][i] == seen[0][i]);
  }
}
