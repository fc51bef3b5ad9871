#include "src/analyses/syscalls/syscall_report.h"

#include <cstdio>
#include <string>

#include <catch2/catch.hpp>

#include "tests/unit/written_text.h"

namespace ptprof::syscalls {
namespace {

// What WriteSyscallCsv writes for `report`.
std::string Csv(const SyscallReport& report) {
  return testing::WrittenText([&](std::FILE* out) { WriteSyscallCsv(out, report); });
}

TEST_CASE("the instances' CSV quotes a caller whose name holds a comma or a quote") {
  SyscallRun run;
  run.instances.resize(3);
  run.instances[0].name = "write";
  run.instances[0].number = 1;
  run.instances[0].caller = "main";
  run.instances[1].name = "read";
  run.instances[1].number = 0;
  run.instances[1].caller = "Reader::fill(char*, unsigned long)";
  run.instances[2].name = "close";
  run.instances[2].number = 3;
  run.instances[2].caller = "quote\"d";
  SyscallReport report;
  report.run = &run;
  report.list_instances = true;
  for (const SyscallInstance& s : run.instances) report.instances.push_back(&s);
  CHECK(Csv(report) ==
        "start_ns,pid,tid,cpu,syscall,number,latency_ns,user_insns,kernel_insns,caller\n"
        ",-1,-1,-1,write,1,,0,,main\n"
        ",-1,-1,-1,read,0,,0,,\"Reader::fill(char*, unsigned long)\"\n"
        ",-1,-1,-1,close,3,,0,,\"quote\"\"d\"\n");
}

}  // namespace
}  // namespace ptprof::syscalls
