#include "src/report/delta_report.h"

#include <cstdio>
#include <string>

#include <nlohmann/json.hpp>

#include <catch2/catch.hpp>

#include "sideband/image_testing.h"
#include "src/analyses/patterns/pattern_parser.h"
#include "tests/unit/written_text.h"

using namespace ptprof;

namespace {

std::string Capture(void (*write)(std::FILE*, const DeltaReport&), const DeltaReport& r) {
  return testing::WrittenText([&](std::FILE* out) { write(out, r); });
}

TraceEvent Block(uint64_t ip, uint32_t insns, uint64_t tsc) {
  ExecBlock b;
  b.first_ip = ip;
  b.insns = insns;
  b.mode = ExecMode::k64Bit;
  TraceEvent e{EventHeader{}, b};
  e.header.tsc = tsc;
  e.header.cpu = 2;
  e.header.offset = tsc;
  return e;
}

}  // namespace

TEST_CASE("the report holds counts, both histograms and the longest intervals") {
  // 0x1000 pause ; nop ; nop ; lfence
  ImageSet images = testing::ImageWith({0xf3, 0x90, 0x90, 0x90, 0x0f, 0xae, 0xe8}, 0x1000);
  auto open = patterns::ParsePattern("open", "pause");
  auto close = patterns::ParsePattern("close", "lfence");
  delta::DeltaOptions options;
  options.clock = EventClock::Ticks();
  auto p = delta::DeltaProfiler::Create(images, *open, *close, options);
  REQUIRE(p);
  (*p)->OnEvent(Block(0x1000, 1, 10));
  (*p)->OnEvent(Block(0x1002, 3, 30));  // 3 instructions, 20 ticks
  (*p)->OnEvent(Block(0x1000, 4, 40));  // 3 instructions, 0 ticks
  (*p)->OnEnd();
  DeltaReportOptions ro;
  ro.input = "t.ptar";
  ro.lane_name = [](int32_t lane) { return lane == 2 ? std::string("cpu2") : std::string(); };
  ro.top = 1;
  ro.time_unit = "ticks";
  ro.symbolize = [](uint64_t ip) { return ip == 0x1000 ? std::string("f") : std::string(); };
  DeltaReport r = MakeDeltaReport(**p, ro);
  CHECK(r.counts.intervals == 2);
  CHECK(r.instructions.count == 2);
  CHECK(r.instructions.distinct == std::vector<std::pair<double, uint64_t>>{{3, 2}});
  REQUIRE(r.top.size() == 1);
  CHECK(r.top[0].interval.id == 1);  // the longer in time
  CHECK(r.top[0].open_symbol == "f");
  CHECK(r.top[0].stream == "cpu2");

  std::string text = Capture(WriteDeltaText, r);
  CHECK(text.find("intervals                   2") != std::string::npos);
  CHECK(text.find("exact values: 3 x2") != std::string::npos);
  CHECK(text.find("f (0x1000) -> 0x1004") != std::string::npos);

  auto json = nlohmann::json::parse(Capture(WriteDeltaJson, r));
  CHECK(json["counts"]["intervals"] == 2);
  CHECK(json["time_unit"] == "ticks");
  CHECK(json["time"]["percentiles"]["max"] == 20);
  CHECK(json["top"][0]["cpu"] == 2);
  CHECK(json["open"]["matches"] == 2);

  std::string csv = Capture(WriteDeltaCsv, r);
  CHECK(csv.find("id,stream,cpu,tid,instructions,time_ticks") == 0);
  CHECK(csv.find("\n1,\"cpu2\",2,,3,20,10,30,0x1000,0x1004,") != std::string::npos);
}

TEST_CASE("the longest intervals come longest first, equally long ones in closing order") {
  // 0x1000 pause ; nop ; nop ; lfence
  ImageSet images = testing::ImageWith({0xf3, 0x90, 0x90, 0x90, 0x0f, 0xae, 0xe8}, 0x1000);
  auto open = patterns::ParsePattern("open", "pause");
  auto close = patterns::ParsePattern("close", "lfence");
  auto p = delta::DeltaProfiler::Create(images, *open, *close, {});  // no time: by instructions
  REQUIRE(p);
  // Intervals of 3, 5, 3, 5, 3 instructions (each pause block, then nops, then the lfence).
  uint64_t tsc = 1;
  for (uint32_t nops : {0, 2, 0, 2, 0}) {
    (*p)->OnEvent(Block(0x1000, 1, tsc++));
    for (uint32_t i = 0; i < nops; ++i) (*p)->OnEvent(Block(0x1002, 1, tsc++));
    (*p)->OnEvent(Block(0x1002, 3, tsc++));
  }
  (*p)->OnEnd();
  REQUIRE((*p)->intervals().size() == 5);
  for (size_t top : {0, 1, 3, 5, 9}) {
    DeltaReportOptions ro;
    ro.top = top;
    DeltaReport r = MakeDeltaReport(**p, ro);
    std::vector<uint64_t> ids;
    for (const ReportedInterval& t : r.top) ids.push_back(t.interval.id);
    const std::vector<uint64_t> all = {2, 4, 1, 3, 5};
    CHECK(ids == std::vector<uint64_t>(all.begin(), all.begin() + std::min<size_t>(top, 5)));
  }
}
