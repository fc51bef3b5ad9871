#include "src/analyses/flow_stats.h"

#include <cstdlib>
#include <string>

#include <catch2/catch.hpp>

using namespace ptprof;

namespace {
TraceEvent Block(uint64_t first, uint32_t insns, BlockEnd end, uint64_t tsc) {
  TraceEvent ev{EventHeader{}, ExecBlock{first, first + 4 * (insns - 1), insns, 4, end,
                                         ExecMode::k64Bit, false, false, kUnknownTime}};
  ev.header.tsc = tsc;
  return ev;
}

std::string Render(const FlowStats& stats, bool json) {
  char* buf = nullptr;
  size_t len = 0;
  std::FILE* mem = open_memstream(&buf, &len);
  if (json) stats.WriteJson(mem); else stats.WriteText(mem);
  std::fclose(mem);
  std::string out(buf, len);
  std::free(buf);
  return out;
}
}  // namespace

TEST_CASE("flow statistics count blocks, exits, gaps, events and functions") {
  FlowStats stats([](uint64_t ip) { return ip < 0x2000 ? std::string("main") : std::string("leaf"); });
  stats.OnEvent(TraceEvent{EventHeader{}, TraceToggle{TraceToggle::Kind::kEnabled, 0x1000, true}});
  stats.OnEvent(Block(0x1000, 5, BlockEnd::kCall, 100));
  stats.OnEvent(Block(0x2000, 3, BlockEnd::kReturn, 150));
  stats.OnEvent(Block(0x1014, 2, BlockEnd::kCall, 170));
  TraceGap gap;
  gap.reason = GapReason::kNoImage;
  stats.OnEvent(TraceEvent{EventHeader{}, gap});
  CHECK(stats.instructions() == 10);
  CHECK(stats.blocks() == 3);
  CHECK(stats.gaps() == 1);
  CHECK(stats.exits().at("call") == 2);
  CHECK(stats.exits().at("return") == 1);
  CHECK(stats.gap_reasons().at("no_image") == 1);
  CHECK(stats.events().at("enabled") == 1);
  CHECK(stats.insns_by_function().at("main") == 7);
  CHECK(stats.insns_by_function().at("leaf") == 3);

  std::string text = Render(stats, false);
  CHECK(text.find("instructions  10") != std::string::npos);
  CHECK(text.find("tsc span      70 ticks") != std::string::npos);
  std::string json = Render(stats, true);
  CHECK(json.find("\"instructions\":10") != std::string::npos);
  CHECK(json.find("\"functions\":{\"leaf\":3,\"main\":7}") != std::string::npos);
}
