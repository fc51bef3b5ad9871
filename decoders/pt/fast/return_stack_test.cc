#include "decoders/pt/fast/return_stack.h"

#include <catch2/catch.hpp>

using namespace ptprof::pt::fast;

TEST_CASE("The return stack pops what was pushed, last first", "[return_stack]") {
  ReturnStack stack;
  CHECK(stack.Empty());
  CHECK(stack.Caller().depth == 0);
  stack.Push(0x10);
  CHECK_FALSE(stack.Empty());
  CHECK(stack.Top() == 0x10);
  const CallerTops one = stack.Caller();
  CHECK(one.depth == 1);
  CHECK(one.top == 0x10);
  stack.Push(0x20);
  stack.Push(0x30);
  const CallerTops three = stack.Caller();
  CHECK(three.depth == 2);
  CHECK(three.top == 0x30);
  CHECK(three.second == 0x20);
  CHECK(stack.Pop() == 0x30);
  CHECK(stack.Pop() == 0x20);
  CHECK(stack.Caller().depth == 1);
  CHECK(stack.Pop() == 0x10);
  CHECK(stack.Empty());
  stack.Push(0x40);
  stack.Clear();
  CHECK(stack.Empty());
}

TEST_CASE("A full return stack forgets its oldest address, as libipt's does", "[return_stack]") {
  ReturnStack stack;
  // 100 pushes around a ring of 64 slots: the last 64 stay.
  for (uint64_t ip = 1; ip <= 100; ++ip) stack.Push(ip);
  const CallerTops tops = stack.Caller();
  CHECK(tops.depth == 2);
  CHECK(tops.top == 100);
  CHECK(tops.second == 99);
  for (uint64_t ip = 100; ip > 36; --ip) {
    REQUIRE_FALSE(stack.Empty());
    const CallerTops now = stack.Caller();
    CHECK(now.top == ip);
    CHECK(now.depth == (ip > 37 ? 2 : 1));
    if (ip > 37) CHECK(now.second == ip - 1);
    CHECK(stack.Top() == ip);
    CHECK(stack.Pop() == ip);
  }
  CHECK(stack.Empty());
  // Every slot of the ring as the top, and as the one below it.
  for (int round = 0; round < 70; ++round) {
    stack.Push(1000 + round);
    stack.Push(2000 + round);
    const CallerTops pair = stack.Caller();
    CHECK(pair.top == uint64_t(2000 + round));
    CHECK(pair.second == uint64_t(1000 + round));
    CHECK(stack.Pop() == uint64_t(2000 + round));
    CHECK(stack.Pop() == uint64_t(1000 + round));
    CHECK(stack.Empty());
    stack.Push(3000 + round);  // moves the ring on by one
    CHECK(stack.Pop() == uint64_t(3000 + round));
  }
}
