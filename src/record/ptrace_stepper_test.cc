#include "src/record/ptrace_stepper.h"

#include <set>

#include <catch2/catch.hpp>

using namespace ptprof;
using namespace ptprof::record;

TEST_CASE("single-stepping /bin/true sees every instruction up to exit") {
  StepperOptions options;
  options.argv = {"/bin/true"};
  uint64_t count = 0;
  std::set<uint64_t> distinct;
  auto result = RunSingleStepped(options, [&](uint64_t ip, const uint8_t*, size_t size) -> Status {
    ++count;
    distinct.insert(ip);
    if (size == 0) return Fail("no code bytes");
    return {};
  });
  REQUIRE(result);
  CHECK(result->exit_status == 0);
  CHECK(!result->killed);
  CHECK(result->steps == count);
  CHECK(count > 1000);              // the dynamic loader alone runs tens of thousands
  CHECK(distinct.size() < count);   // loops execute addresses more than once
}

TEST_CASE("the step limit kills the program") {
  StepperOptions options;
  options.argv = {"/bin/true"};
  options.max_steps = 100;
  auto result = RunSingleStepped(options, [](uint64_t, const uint8_t*, size_t) -> Status { return {}; });
  REQUIRE(result);
  CHECK(result->killed);
  CHECK(result->steps == 100);
}

TEST_CASE("a callback error stops the run and is returned") {
  StepperOptions options;
  options.argv = {"/bin/true"};
  auto result = RunSingleStepped(options, [](uint64_t, const uint8_t*, size_t) -> Status {
    return Fail("stop here");
  });
  REQUIRE(!result);
  CHECK(result.error().message == "stop here");
}

TEST_CASE("a program that cannot start is reported") {
  StepperOptions options;
  options.argv = {"/nonexistent/program"};
  auto result = RunSingleStepped(options, [](uint64_t, const uint8_t*, size_t) -> Status { return {}; });
  // execvp fails in the child, which exits 127 without executing a traced instruction.
  if (result) {
    CHECK(result->exit_status == 127);
  } else {
    CHECK(!result.error().message.empty());
  }
}
