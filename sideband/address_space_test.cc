#include "sideband/address_space.h"

#include <catch2/catch.hpp>

namespace ptprof {
namespace {

TEST_CASE("AddressSpaces: mmaps accumulate, the kernel half is in every space") {
  AddressSpaces spaces;
  spaces.Map(AddressSpaces::kKernel, 0, {0xffffffff81000000, 0x1000000, 9});
  spaces.Map(100, 10, {0x400000, 0x1000, 1});
  spaces.Map(100, 20, {0x7f0000000000, 0x2000, 2});
  const size_t early = spaces.SpaceAt(100, 15);
  const size_t late = spaces.SpaceAt(100, 25);
  CHECK(early != late);
  CHECK(spaces.MappingsOf(early) ==
        std::vector<Mapping>{{0xffffffff81000000, 0x1000000, 9}, {0x400000, 0x1000, 1}});
  CHECK(spaces.MappingsOf(late).size() == 3);
  CHECK(spaces.SpaceAt(100, 5) == early);  // before anything known: the first state
  CHECK(spaces.SpaceAt(7, 5) == AddressSpaces::kKernelOnly);
  CHECK(spaces.MappingsOf(AddressSpaces::kKernelOnly).size() == 1);
}

TEST_CASE("AddressSpaces: the times around a time with the same space") {
  AddressSpaces spaces;
  spaces.Map(100, 10, {0x400000, 0x1000, 1});
  spaces.Map(100, 20, {0x7f0000000000, 0x2000, 2});
  spaces.Map(100, 20, {0x7f0000100000, 0x2000, 3});  // the same time: the same state
  spaces.Exec(100, 40);
  TimeSpan span;
  const size_t first = spaces.SpaceAt(100, 5, &span);
  CHECK(span == TimeSpan{0, 20});  // before anything known, the first state holds
  CHECK(spaces.SpaceAt(100, 19) == first);
  CHECK(spaces.SpaceAt(100, 20, &span) != first);
  CHECK(span == TimeSpan{20, 40});
  CHECK(spaces.SpaceAt(100, 39) == spaces.SpaceAt(100, 20));
  spaces.SpaceAt(100, 40, &span);
  CHECK(span == TimeSpan{40, UINT64_MAX});
  CHECK(spaces.SpaceAt(7, 5, &span) == AddressSpaces::kKernelOnly);
  CHECK(span == TimeSpan{});  // a pid never seen: the kernel's space at every time
}

TEST_CASE("AddressSpaces: fork copies, exec replaces, exit keeps the last state, threads share") {
  AddressSpaces spaces;
  spaces.Map(100, 10, {0x400000, 0x1000, 1});
  spaces.Fork(200, 100, 30);
  spaces.Fork(100, 100, 31);  // a new thread of 100: nothing changes
  spaces.Map(100, 40, {0x500000, 0x1000, 2});
  CHECK(spaces.MappingsOf(spaces.SpaceAt(200, 35)) == std::vector<Mapping>{{0x400000, 0x1000, 1}});
  CHECK(spaces.MappingsOf(spaces.SpaceAt(200, 45)) == std::vector<Mapping>{{0x400000, 0x1000, 1}});
  CHECK(spaces.MappingsOf(spaces.SpaceAt(100, 45)).size() == 2);
  spaces.Exec(200, 50);
  spaces.Map(200, 50, {0x400000, 0x3000, 3});  // the new program, same time: one state
  CHECK(spaces.MappingsOf(spaces.SpaceAt(200, 50)) == std::vector<Mapping>{{0x400000, 0x3000, 3}});
  CHECK(spaces.MappingsOf(spaces.SpaceAt(200, 49)) == std::vector<Mapping>{{0x400000, 0x1000, 1}});
  spaces.Exit(200, 60);  // a trace time just after the exit record still finds the code
  CHECK(spaces.MappingsOf(spaces.SpaceAt(200, 61)) == std::vector<Mapping>{{0x400000, 0x3000, 3}});
  spaces.Fork(200, 100, 80);  // the pid used again: a copy of its new parent's mappings
  CHECK(spaces.MappingsOf(spaces.SpaceAt(200, 81)).size() == 2);
  // The same mapping again (perf repeats them) makes no new state.
  const size_t before = spaces.spaces();
  spaces.Map(100, 70, {0x500000, 0x1000, 2});
  CHECK(spaces.spaces() == before);
}

}  // namespace
}  // namespace ptprof
