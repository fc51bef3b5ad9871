#include "src/analyses/syscalls/syscall_summary.h"

#include <catch2/catch.hpp>

namespace ptprof::syscalls {
namespace {

TEST_CASE("nearest-rank percentiles") {
  std::vector<uint64_t> values;
  for (uint64_t v = 100; v >= 1; --v) values.push_back(v);
  Distribution d = Distribute(values);
  CHECK(d.count == 100);
  CHECK(d.min == 1);
  CHECK(d.q1 == 25);
  CHECK(d.p50 == 50);
  CHECK(d.q3 == 75);
  CHECK(d.p99 == 99);
  CHECK(d.max == 100);
  CHECK(d.mean == Approx(50.5));
  CHECK(Distribute({}).count == 0);
  CHECK(Distribute({7}).p99 == 7);
}

TEST_CASE("summaries per name, most frequent first") {
  std::vector<SyscallInstance> instances(3);
  instances[0].name = "read";
  instances[0].number = 0;
  instances[0].time_known = true;
  instances[0].latency_ns = 10;
  instances[1].name = "getpid";
  instances[1].number = 39;
  instances[1].time_known = true;
  instances[1].latency_ns = 30;
  instances[1].kernel_traced = true;
  instances[1].kernel_insns = 300;
  instances[2].name = "getpid";
  instances[2].number = 39;
  instances[2].time_known = true;
  instances[2].latency_ns = 50;
  instances[2].kernel_traced = true;
  instances[2].kernel_insns = 310;
  auto summaries = Summarize(instances);
  REQUIRE(summaries.size() == 2);
  CHECK(summaries[0].name == "getpid");
  CHECK(summaries[0].count == 2);
  CHECK(summaries[0].kernel_traced == 2);
  CHECK(summaries[0].latency_ns.max == 50);
  CHECK(summaries[0].kernel_insns.p50 == 300);
  CHECK(summaries[1].name == "read");
}

}  // namespace
}  // namespace ptprof::syscalls
