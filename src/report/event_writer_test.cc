#include "src/report/event_writer.h"

#include <algorithm>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "src/model/parted_testing.h"
#include "src/model/json_text.h"

using namespace ptprof;

namespace {
// What a writer with `options` writes for `events`.
std::string CaptureAll(const EventWriterOptions& options, const std::vector<TraceEvent>& events) {
  char* buf = nullptr;
  size_t len = 0;
  std::FILE* mem = open_memstream(&buf, &len);
  {
    EventWriter w(mem, options);
    for (const TraceEvent& e : events) w.OnEvent(e);
    w.OnEnd();
  }
  std::fclose(mem);
  std::string out(buf, len);
  free(buf);
  return out;
}
std::string Capture(const EventWriterOptions& options, const TraceEvent& ev) {
  return CaptureAll(options, {ev});
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

namespace {

// Blocks, instructions, a gap and a marker, in order.
std::vector<TraceEvent> MixedEvents() {
  std::vector<TraceEvent> events;
  for (uint64_t i = 0; i < 300; ++i) {
    TraceEvent block{EventHeader{}, ExecBlock{0x401000 + 16 * i, 0x401008 + 16 * i,
                                              static_cast<uint32_t>(1 + i % 5), 2, BlockEnd::kCall,
                                              ExecMode::k64Bit, false, false, kUnknownTime}};
    block.header.tsc = 1000 + i;
    block.header.time_ns = i % 3 ? kUnknownTime : 5000 + i;
    events.push_back(block);
    if (i % 37 == 5) {
      TraceGap gap;
      gap.reason = GapReason::kOverflow;
      gap.detail = "overflow";
      TraceEvent g{EventHeader{}, gap};
      g.header.offset = i;
      events.push_back(g);
    }
    if (i % 53 == 7) {
      Instruction insn;
      insn.ip = 0x402000 + i;
      insn.size = 1;
      insn.mode = ExecMode::k64Bit;
      insn.bytes[0] = 0x90;
      events.push_back(TraceEvent{EventHeader{}, insn});
    }
  }
  return events;
}

// What `events` write through one writer, or cut into pieces taken in turns directly and in
// parts (each part written on a thread of its own).
std::string Write(const EventWriterOptions& options, const std::vector<TraceEvent>& events,
                  size_t piece) {
  char* buf = nullptr;
  size_t len = 0;
  std::FILE* mem = open_memstream(&buf, &len);
  {
    EventWriter writer(mem, options);
    for (size_t at = 0, n = 0; at < events.size(); ++n) {
      const size_t end = piece ? std::min(events.size(), at + 1 + (n * 7) % piece) : events.size();
      if (!piece || n % 2 == 0) {
        for (; at < end; ++at) writer.OnEvent(events[at]);
        continue;
      }
      std::unique_ptr<EventSink> part = writer.NewPart();
      std::thread([&] {
        for (size_t i = at; i < end; ++i) part->OnEvent(events[i]);
        part->OnEnd();
      }).join();
      at = end;
      writer.Fold(std::move(part));
    }
    writer.OnEnd();
  }
  std::fclose(mem);
  std::string out(buf, len);
  free(buf);
  return out;
}

}  // namespace

TEST_CASE("a writer in parts writes the bytes of one writer") {
  for (EventFormat format : {EventFormat::kText, EventFormat::kJsonl}) {
    EventWriterOptions options;
    options.format = format;
    options.symbolize = [](uint64_t ip) { return ip % 32 ? std::string() : "f+0x" + std::to_string(ip % 7); };
    options.disassemble = [](const Instruction&) { return std::string("nop"); };
    const std::string whole = Write(options, MixedEvents(), 0);
    CHECK(whole.size() > 10000);
    for (size_t piece : {size_t{1}, size_t{5}, size_t{40}, size_t{1000}}) {
      INFO("format " << static_cast<int>(format) << ", pieces of up to " << piece);
      CHECK(Write(options, MixedEvents(), piece) == whole);
    }
  }
}

TEST_CASE("a block met again gets its kept line with its own cpu, time and ids") {
  std::vector<TraceEvent> events;
  for (int i = 0; i < 3; ++i) {
    TraceEvent block{EventHeader{}, ExecBlock{0x401000, 0x401019, 5, 2, BlockEnd::kCall,
                                              ExecMode::k64Bit, i == 2, false, kUnknownTime}};
    block.header.cpu = i;
    block.header.time_ns = i ? 100u * i : kUnknownTime;
    block.header.tsc = 7;
    block.header.pid = -1 + i;
    block.header.tid = 40 + i;
    events.push_back(block);
  }
  auto write = [&](EventFormat format) {
    EventWriterOptions options;
    options.format = format;
    options.show_cpu = true;
    options.symbolize = [](uint64_t ip) { return ip == 0x401000 ? std::string("f") : std::string(); };
    return CaptureAll(options, events);
  };
  CHECK(write(EventFormat::kJsonl) ==
        R"({"first_ip":"0x401000","last_ip":"0x401019","insns":5,"exit":"call","cpu":0,"tsc":7,"tid":40})" "\n"
        R"({"first_ip":"0x401000","last_ip":"0x401019","insns":5,"exit":"call","cpu":1,"time":100,"tsc":7,"pid":0,"tid":41})" "\n"
        R"({"first_ip":"0x401000","last_ip":"0x401019","insns":5,"exit":"call","speculative":true,"cpu":2,"time":200,"tsc":7,"pid":1,"tid":42})" "\n");
  const std::string line = "0000000000401000..0000000000401019       5 insns  call           <f>\n";
  CHECK(write(EventFormat::kText) == "cpu0  " + line + "cpu1             100  " + line +
                                          "cpu2             200  " + line);
}

TEST_CASE("an instruction met again at its address is disassembled again when its bytes differ") {
  std::vector<TraceEvent> events;
  for (const uint8_t opcode : {0x90, 0xc3, 0x90}) {  // code rewritten at the same address
    Instruction insn;
    insn.ip = 0x1000;
    insn.size = 1;
    insn.bytes[0] = opcode;
    insn.mode = ExecMode::k64Bit;
    events.push_back(TraceEvent{EventHeader{}, insn});
  }
  int disassembled = 0;
  EventWriterOptions options;
  options.disassemble = [&](const Instruction& i) {
    ++disassembled;
    return std::string(i.bytes[0] == 0x90 ? "nop" : "ret");
  };
  const std::string out = CaptureAll(options, events);
  const std::string pad(37, ' ');
  CHECK(out == "0000000000001000  nop" + pad + " \n0000000000001000  ret" + pad + " \n" +
                   "0000000000001000  nop" + pad + " \n");
  CHECK(disassembled == 2);  // the first line was kept
}

TEST_CASE("blocks written from batches are the blocks written one by one") {
  std::mt19937 random(3);
  auto pick = [&](uint32_t n) { return std::uniform_int_distribution<uint32_t>(0, n - 1)(random); };
  std::vector<TraceEvent> events;
  for (int i = 0; i < 3000; ++i) {
    const uint64_t first = 0x401000 + 4 * pick(64);
    ExecBlock block{first, first + 4 * pick(4), 1 + pick(5), 2, static_cast<BlockEnd>(pick(13)),
                    ExecMode::k64Bit, pick(10) == 0, false, kUnknownTime};
    if (pick(20) == 0) block.end_time_ns = 5000 + i;
    TraceEvent e{EventHeader{}, block};
    e.header.cpu = static_cast<int32_t>(pick(2));
    e.header.tsc = 100 + i / 7;  // runs of blocks with one tsc
    e.header.pid = pick(3) ? 9 : 10;
    e.header.tid = e.header.pid + 1;
    e.header.offset = i;
    if (pick(10) == 0) e.header.time_ns = 1000 + i;  // not packed: written one by one
    if (pick(50) == 0) e.body = TraceGap{};
    events.push_back(e);
  }
  for (const EventFormat format : {EventFormat::kText, EventFormat::kJsonl}) {
    EventWriterOptions options;
    options.format = format;
    options.show_cpu = true;
    options.symbolize = [](uint64_t ip) { return ip % 8 ? std::string() : "f+" + std::to_string(ip); };
    auto write = [&](bool batched) {
      char* buf = nullptr;
      size_t len = 0;
      std::FILE* mem = open_memstream(&buf, &len);
      {
        EventWriter w(mem, options);
        testing::FeedEvents(w, events, 0, events.size(), batched);
        w.OnEnd();
      }
      std::fclose(mem);
      std::string out(buf, len);
      free(buf);
      return out;
    };
    const std::string one_by_one = write(false);
    CHECK(one_by_one.size() > 100000);
    const std::string batched = write(true);
    CHECK(batched == one_by_one);
  }
}
