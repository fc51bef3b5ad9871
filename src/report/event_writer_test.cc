#include "src/report/event_writer.h"

#include <cstdio>
#include <string>

#include <catch2/catch.hpp>

#include "src/report/json_text.h"

using namespace ptprof;

namespace {
std::string Capture(const EventWriterOptions& options, const TraceEvent& ev) {
  char* buf = nullptr;
  size_t len = 0;
  std::FILE* mem = open_memstream(&buf, &len);
  {
    EventWriter w(mem, options);
    w.OnEvent(ev);
    w.OnEnd();
  }
  std::fclose(mem);
  std::string out(buf, len);
  free(buf);
  return out;
}
}  // namespace

TEST_CASE("JSONL records use the documented field names") {
  TraceEvent block{EventHeader{}, ExecBlock{0x401000, 0x401019, 5, 2, BlockEnd::kSyscall,
                                            ExecMode::k64Bit, false, false, kUnknownTime}};
  block.header.cpu = 0;
  block.header.time_ns = 123;
  CHECK(EventToJson(block) ==
        R"({"first_ip":"0x401000","last_ip":"0x401019","insns":5,"exit":"syscall","cpu":0,"time":123})");

  Instruction insn;
  insn.ip = 0x401000;
  insn.size = 5;
  insn.iclass = BlockEnd::kCall;
  TraceEvent ie{EventHeader{}, insn};
  ie.header.cpu = 0;
  ie.header.time_ns = 123;
  CHECK(EventToJson(ie) == R"({"ip":"0x401000","size":5,"iclass":"call","cpu":0,"time":123})");

  block.header.tsc = 0x5000;
  CHECK(EventToJson(block) ==
        R"({"first_ip":"0x401000","last_ip":"0x401019","insns":5,"exit":"syscall","cpu":0,"time":123,"tsc":20480})");

  TraceEvent toggle{EventHeader{}, TraceToggle{TraceToggle::Kind::kEnabled, 0x1000, true}};
  CHECK(EventToJson(toggle) == R"({"event":"enabled","ip":"0x1000"})");

  TraceGap gap;
  gap.reason = GapReason::kDesync;
  gap.detail = "bad \"packet\"";
  TraceEvent ge{EventHeader{}, gap};
  ge.header.offset = 0x23;
  CHECK(EventToJson(ge) == R"({"event":"gap","reason":"desync","offset":35,"detail":"bad \"packet\""})");
}

TEST_CASE("text output symbolises and disassembles through the injected functions") {
  EventWriterOptions opt;
  opt.symbolize = [](uint64_t ip) { return ip == 0x401000 ? std::string("_start") : std::string(); };
  opt.disassemble = [](const Instruction&) { return std::string("mov eax, 0x1"); };
  Instruction insn;
  insn.ip = 0x401000;
  insn.size = 5;
  std::string line = Capture(opt, TraceEvent{EventHeader{}, insn});
  CHECK(line.find("0000000000401000") == 0);
  CHECK(line.find("mov eax, 0x1") != std::string::npos);
  CHECK(line.find("<_start>") != std::string::npos);
}

TEST_CASE("JSON strings escape control characters") {
  CHECK(JsonString("a\tb\x01") == "\"a\\tb\\u0001\"");
  CHECK(HexAddress(0) == "0x0");
}

TEST_CASE("text output names other events with their payload, IP and symbol") {
  EventWriterOptions opt;
  opt.symbolize = [](uint64_t ip) { return ip == 0x401000 ? std::string("_start") : std::string(); };
  TraceEvent enabled{EventHeader{}, TraceToggle{TraceToggle::Kind::kEnabled, 0x401000, true}};
  CHECK(Capture(opt, enabled) == "[enabled ip 0x401000 <_start>]\n");
  TraceEvent disabled{EventHeader{}, TraceToggle{TraceToggle::Kind::kDisabled, 0, false}};
  CHECK(Capture(opt, disabled) == "[disabled]\n");
  ModeChange mode;
  mode.mode = ExecMode::k64Bit;
  CHECK(Capture(opt, TraceEvent{EventHeader{}, mode}) == "[exec_mode 64-bit]\n");
  ContextSwitch paging;
  paging.kind = ContextSwitch::Kind::kPaging;
  paging.value = 0x1000;
  CHECK(Capture(opt, TraceEvent{EventHeader{}, paging}) == "[paging cr3 0x1000]\n");
  Marker ptw;
  ptw.kind = Marker::Kind::kPtwrite;
  ptw.value = 0xabcd;
  CHECK(Capture(opt, TraceEvent{EventHeader{}, ptw}) == "[ptwrite 0xabcd]\n");
  PowerEvent cbr;
  cbr.value = 0x1f;
  CHECK(Capture(opt, TraceEvent{EventHeader{}, cbr}) == "[cbr 0x1f]\n");
  TraceGap gap;
  gap.reason = GapReason::kNoImage;
  gap.has_ip = true;
  gap.ip = 0x401000;
  gap.detail = "no memory mapped at this address";
  TraceEvent ge{EventHeader{}, gap};
  ge.header.offset = 0x6aa;
  CHECK(Capture(opt, ge) ==
        "[gap: no_image at offset 0x6aa, ip 0x401000 <_start>: no memory mapped at this address]\n");
}

TEST_CASE("Arm blocks, exceptions and PE contexts have JSONL records and text") {
  TraceEvent block{EventHeader{}, ExecBlock{0x1000, 0x1008, 3, 4, BlockEnd::kCall, ExecMode::kA64,
                                            false, false, kUnknownTime}};
  CHECK(EventToJson(block) ==
        R"({"first_ip":"0x1000","last_ip":"0x1008","insns":3,"exit":"call","isa":"a64","last_size":4})");
  Exception ex;
  ex.number = 0x18;
  ex.return_ip = 0x2000;
  ex.has_return_ip = true;
  TraceEvent exc{EventHeader{}, ex};
  CHECK(EventToJson(exc) == R"({"event":"exception","number":24,"return_ip":"0x2000"})");
  PeContext ctx;
  ctx.mode = ExecMode::kA64;
  ctx.exception_level = 1;
  ctx.is_64bit = true;
  ctx.context_id = 0x1f;
  ctx.has_context_id = true;
  TraceEvent pe{EventHeader{}, ctx};
  CHECK(EventToJson(pe) ==
        R"({"event":"pe_context","isa":"a64","el":1,"security":"nonsecure","bits":64,"context_id":31})");
  EventWriterOptions text;
  CHECK(Capture(text, pe) == "[pe_context a64 EL1 nonsecure 64-bit context_id 0x1f]\n");
  CHECK(Capture(text, exc) == "[exception number 0x18 ip 0x2000]\n");
  Marker ts;
  ts.kind = Marker::Kind::kTimestamp;
  ts.value = 77;
  CHECK(EventToJson(TraceEvent{EventHeader{}, ts}) == R"({"event":"timestamp","value":77})");
}
