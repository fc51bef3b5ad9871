#include "src/analyses/sweep/sweep_workloads.h"

#include <catch2/catch.hpp>

using namespace ptprof::sweep;

TEST_CASE("workloads resolve by name, case-insensitively, in the order given") {
  auto all = ResolveWorkloads({}, "/w");
  REQUIRE(all);
  CHECK(all->size() == KnownWorkloads().size());
  auto two = ResolveWorkloads({"omega", "TAILFACT"}, "/w");
  REQUIRE(two);
  REQUIRE(two->size() == 2);
  CHECK((*two)[0].name == "Omega");
  CHECK((*two)[0].binary == "/w/sweep_omega");
  CHECK((*two)[1].name == "TailFact");
}

TEST_CASE("unknown names list the known ones; paths are programs") {
  auto bad = ResolveWorkloads({"nosuch"}, "/w");
  REQUIRE(!bad);
  CHECK(bad.error().message.find("--workload nosuch: unknown workload (known: TailFact, Fib") == 0);
  auto path = ResolveWorkloads({"/bin/true"}, "/w");
  REQUIRE(path);
  CHECK((*path)[0].name == "true");
  CHECK((*path)[0].binary == "/bin/true");
}
