#include "src/model/trace_event.h"

#include <set>
#include <string>

#include <catch2/catch.hpp>

using namespace ptprof;

TEST_CASE("block end names are distinct and stable") {
  std::set<std::string> names;
  for (int i = 0; i <= static_cast<int>(BlockEnd::kTraceStop); ++i)
    names.insert(BlockEndName(static_cast<BlockEnd>(i)));
  CHECK(names.size() == static_cast<size_t>(BlockEnd::kTraceStop) + 1);
  CHECK(std::string(BlockEndName(BlockEnd::kSyscall)) == "syscall");
  CHECK(std::string(BlockEndName(BlockEnd::kCondTaken)) == "cond_taken");
}

TEST_CASE("an event carries its header and body") {
  TraceEvent ev{EventHeader{}, ExecBlock{0x401000, 0x401019, 5, 2, BlockEnd::kSyscall,
                                         ExecMode::k64Bit, false, false, kUnknownTime}};
  ev.header.cpu = 3;
  REQUIRE(std::holds_alternative<ExecBlock>(ev.body));
  CHECK(std::get<ExecBlock>(ev.body).insns == 5);
  CHECK(ev.header.time_ns == kUnknownTime);
  CHECK(std::string(ExecModeName(ExecMode::k64Bit)) == "64-bit");
  CHECK(std::string(GapReasonName(GapReason::kOverflow)) == "overflow");
}

TEST_CASE("event kinds have their JSONL names") {
  CHECK(std::string(EventName(TraceEvent{EventHeader{}, TraceToggle{TraceToggle::Kind::kResumed, 0, false}})) == "resumed");
  CHECK(std::string(EventName(TraceEvent{EventHeader{}, ModeChange{}})) == "exec_mode");
  CHECK(std::string(EventName(TraceEvent{EventHeader{}, PowerEvent{}})) == "cbr");
  CHECK(std::string(EventName(TraceEvent{EventHeader{}, ExecBlock{}})) == "block");
  Marker abort;
  abort.kind = Marker::Kind::kTsxAbort;
  CHECK(std::string(EventName(TraceEvent{EventHeader{}, abort})) == "tsx_abort");
}

TEST_CASE("Arm events have their JSONL names") {
  CHECK(std::string(EventName(TraceEvent{EventHeader{}, Exception{}})) == "exception");
  Exception ret;
  ret.kind = Exception::Kind::kReturn;
  CHECK(std::string(EventName(TraceEvent{EventHeader{}, ret})) == "exception_return");
  CHECK(std::string(EventName(TraceEvent{EventHeader{}, PeContext{}})) == "pe_context");
  Marker ts;
  ts.kind = Marker::Kind::kTimestamp;
  CHECK(std::string(EventName(TraceEvent{EventHeader{}, ts})) == "timestamp");
  CHECK(std::string(GapReasonName(GapReason::kNoPath)) == "no_path");
  CHECK(std::string(SecurityName(PeContext::Security::kRealm)) == "realm");
}
