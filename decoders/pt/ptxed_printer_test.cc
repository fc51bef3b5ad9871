#include "decoders/pt/ptxed_printer.h"

#include <cstdio>
#include <cstdlib>
#include <string>

#include <catch2/catch.hpp>

#include "decoders/pt/flow_testing.h"
#include "decoders/pt/ptxed_run.h"

using namespace ptprof;
using namespace ptprof::pt;
using namespace ptprof::pt::testing;

namespace {

struct Output {
  int status = 0;
  std::string out;
  std::string err;
};

// Runs `decode --format ptxed` on the sample program and `trace` with extra options.
Output Ptxed(const std::vector<uint8_t>& trace, std::vector<std::string> options) {
  TempFile code(SampleProgram());
  TempFile pt(trace);
  options.push_back("--raw");
  options.push_back(code.path() + ":0x1000");
  options.push_back("--pt");
  options.push_back(pt.path());
  char* out_buf = nullptr;
  char* err_buf = nullptr;
  size_t out_len = 0, err_len = 0;
  std::FILE* out = open_memstream(&out_buf, &out_len);
  std::FILE* err = open_memstream(&err_buf, &err_len);
  Output result;
  result.status = RunPtxed(options, out, err, "test");
  std::fclose(out);
  std::fclose(err);
  result.out.assign(out_buf, out_len);
  result.err.assign(err_buf, err_len);
  std::free(out_buf);
  std::free(err_buf);
  return result;
}

}  // namespace

TEST_CASE("ptxed's listing with --no-inst") {
  Output o = Ptxed(SampleTrace(), {"--no-inst", "--check"});
  CHECK(o.status == 0);
  CHECK(o.out ==
        "[enabled]\n"
        "0000000000001000\n"
        "0000000000001001\n"
        "0000000000001005\n"
        "0000000000001010\n"
        "0000000000001011\n"
        "000000000000100a\n"
        "[disabled]\n");
}

TEST_CASE("ptxed's listing with disassembly, time, blocks and statistics") {
  Output o = Ptxed(SampleTrace(0xabc), {"--block:show-blocks", "--time", "--event:time",
                                        "--event:ip", "--stat"});
  CHECK(o.status == 0);
  CHECK(o.out ==
        "[0000000000000abc  enabled, ip: 0000000000001000]\n"
        "[block 1]\n"
        "0000000000000abc  0000000000001000  nop \n"
        "0000000000000abc  0000000000001001  jz 0x1005\n"
        "[block 2]\n"
        "0000000000000abc  0000000000001005  call 0x1010\n"
        "[block 3]\n"
        "0000000000000abc  0000000000001010  nop \n"
        "0000000000000abc  0000000000001011  ret \n"
        "[block 4]\n"
        "0000000000000abc  000000000000100a  syscall \n"
        "[0000000000000abc  disabled]\n"
        "insn: 6.\n"
        "blocks:\t4.\n");
}

TEST_CASE("ptxed's error lines and resync") {
  PacketWriter bad;
  bad.Psb().ModeExec(ptem_64bit).PsbEnd().TipPge(0x5000).TipPgdSuppressed();
  std::vector<uint8_t> trace = bad.bytes();
  auto good = SampleTrace();
  for (int i = 0; i < 2; ++i) trace.insert(trace.end(), good.begin(), good.end());
  Output o = Ptxed(trace, {"--no-inst", "--insn-decoder", "--quiet", "--stat"});
  CHECK(o.status == 0);
  // Quiet keeps errors and statistics only.
  CHECK(o.out.find(": error: no memory mapped at this address]\n") != std::string::npos);
  CHECK(o.out.find(", 5000: error") != std::string::npos);
  CHECK(o.out.substr(o.out.size() - 9) == "insn: 6.\n");
}

TEST_CASE("ptxed front end errors name the file and set the exit status") {
  Output missing = Ptxed(SampleTrace(), {"--elf", "/nonexistent/elf"});
  CHECK(missing.status == 1);
  CHECK(missing.err.find("/nonexistent/elf") != std::string::npos);
  Output usage = Ptxed(SampleTrace(), {"--bogus"});
  CHECK(usage.status == 2);
  Output cpu = Ptxed(SampleTrace(), {"--no-inst", "--cpu", "0/0"});
  CHECK(cpu.status == 0);
  CHECK(cpu.out.rfind("[0, 0: config error: unknown cpu]\n", 0) == 0);
}
