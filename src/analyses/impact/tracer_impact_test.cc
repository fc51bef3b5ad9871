#include "src/analyses/impact/tracer_impact.h"

#include <catch2/catch.hpp>

namespace ptprof::impact {
namespace {

using syscalls::SyscallInstance;
using syscalls::SyscallRun;

// A getpid whose kernel tree is entry -> handler (10 insns), plus `tracer` insns in
// handler -> ftrace_caller -> function_trace_call when `tracer` > 0.
SyscallInstance Getpid(uint64_t latency, uint64_t tracer) {
  SyscallInstance s;
  s.name = "getpid";
  s.number = 39;
  s.kernel_traced = true;
  s.time_known = true;
  s.latency_ns = latency;
  CallTreeNode& entry = s.kernel_tree.root().Child("entry_SYSCALL_64");
  entry.entries = 1;
  entry.self_insns = 4;
  CallTreeNode& handler = entry.Child("__x64_sys_getpid");
  handler.entries = 1;
  handler.self_insns = 6;
  if (tracer) {
    CallTreeNode& caller = handler.Child("ftrace_caller");
    caller.entries = 1;
    caller.self_insns = tracer / 2;
    CallTreeNode& call = caller.Child("function_trace_call");
    call.entries = 1;
    call.self_insns = tracer - tracer / 2;
  }
  s.kernel_tree.Finalize();
  s.kernel_insns = s.kernel_tree.root().total_insns;
  return s;
}

SyscallRun Run(std::vector<SyscallInstance> instances) {
  SyscallRun run;
  run.timed = true;
  for (auto& s : instances) {
    run.instructions += s.kernel_insns + 5;
    run.tree.Merge(s.kernel_tree);
    run.instances.push_back(std::move(s));
  }
  run.tree.Finalize();
  return run;
}

TEST_CASE("extra instructions and time per call, attributed to the tracer-only paths") {
  std::vector<SyscallInstance> a, b;
  a.push_back(Getpid(100, 0));
  a.push_back(Getpid(120, 0));
  b.push_back(Getpid(200, 40));
  b.push_back(Getpid(260, 40));
  b.push_back(Getpid(230, 60));
  SyscallRun run_a = Run(std::move(a));
  SyscallRun run_b = Run(std::move(b));
  ImpactResult r = CompareRuns("A", run_a, "B", run_b);
  REQUIRE(r.kinds.size() == 1);
  const KindImpact& k = r.kinds[0];
  CHECK(k.name == "getpid");
  CHECK(k.count_a == 2);
  CHECK(k.count_b == 3);
  CHECK(k.kernel_traced);
  CHECK(k.insns_a.p50 == 10);
  CHECK(k.extra_insns.median == 40);
  CHECK(k.extra_insns.mean == Approx(140.0 / 3));
  CHECK(k.extra_insns.max == 60);
  CHECK(k.extra_ns.median == 130);  // 230 - A's median 100
  REQUIRE(k.tracer_paths.size() == 1);
  CHECK(k.tracer_paths[0].name == "ftrace_caller");
  CHECK(k.tracer_paths[0].insns == 140);
  CHECK(k.tracer_paths[0].share_of_extra == Approx(1.0));
  CHECK(k.tracer_path_insns == 140);
  REQUIRE(k.tracer_functions.size() == 2);
  CHECK(k.tracer_function_insns == 140);
  CHECK(r.flow_tracer_function_insns == 140);
  CHECK(r.summary.find("getpid took +47 kernel instructions per call") != std::string::npos);
  REQUIRE(r.functions.size() == 4);
  CHECK(r.functions[0].name == "ftrace_caller");  // +70 self instructions
  CHECK(r.functions[0].calls_a == 0);
  CHECK(r.functions[0].calls_b == 3);
  CHECK(r.functions[2].name == "__x64_sys_getpid");
  CHECK(r.functions[2].insns_b - r.functions[2].insns_a == 6);
}

TEST_CASE("kinds in one run only are listed apart") {
  std::vector<SyscallInstance> a, b;
  a.push_back(Getpid(100, 0));
  SyscallInstance read;
  read.name = "read";
  b.push_back(std::move(read));
  SyscallRun run_a = Run(std::move(a));
  SyscallRun run_b = Run(std::move(b));
  ImpactResult r = CompareRuns("A", run_a, "B", run_b);
  CHECK(r.kinds.empty());
  CHECK(r.only_in_a == std::vector<std::string>{"getpid"});
  CHECK(r.only_in_b == std::vector<std::string>{"read"});
  CHECK(r.summary.find("share no syscall kind") != std::string::npos);
}

}  // namespace
}  // namespace ptprof::impact
