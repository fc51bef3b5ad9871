#include "src/analyses/flow_stats.h"

#include <algorithm>
#include <map>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "src/model/parted_testing.h"
#include "tests/unit/written_text.h"

using namespace ptprof;

namespace {
TraceEvent Block(uint64_t first, uint32_t insns, BlockEnd end, uint64_t tsc) {
  TraceEvent ev{EventHeader{}, ExecBlock{first, first + 4 * (insns - 1), insns, 4, end,
                                         ExecMode::k64Bit, false, false, kUnknownTime}};
  ev.header.tsc = tsc;
  return ev;
}

std::string Render(const FlowStats& stats, bool json) {
  return testing::WrittenText([&](std::FILE* out) {
    if (json) stats.WriteJson(out);
    else stats.WriteText(out);
  });
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

TEST_CASE("flow statistics in parts add up to those of the whole stream") {
  auto function_of = [](uint64_t ip) { return ip < 0x2000 ? std::string("main") : std::string("leaf"); };
  std::vector<TraceEvent> events;
  for (uint64_t i = 0; i < 200; ++i) {
    events.push_back(Block(0x1000 + (i % 3) * 0x800, static_cast<uint32_t>(1 + i % 4),
                           i % 2 ? BlockEnd::kCall : BlockEnd::kReturn, 500 - i));
    if (i % 17 == 3) {
      TraceGap gap;
      gap.reason = i % 2 ? GapReason::kNoImage : GapReason::kOverflow;
      events.push_back(TraceEvent{EventHeader{}, gap});
    }
    if (i % 29 == 1)
      events.push_back(TraceEvent{EventHeader{}, TraceToggle{TraceToggle::Kind::kEnabled, 0x1000, true}});
  }
  FlowStats whole(function_of);
  for (const TraceEvent& event : events) whole.OnEvent(event);
  for (size_t piece : {size_t{1}, size_t{9}, size_t{60}}) {
    INFO("pieces of " << piece);
    FlowStats parted(function_of);
    for (size_t at = 0, n = 0; at < events.size(); ++n) {
      const size_t end = std::min(events.size(), at + piece);
      if (n % 2 == 0) {
        for (; at < end; ++at) parted.OnEvent(events[at]);
        continue;
      }
      std::unique_ptr<EventSink> part = parted.NewPart();
      for (; at < end; ++at) part->OnEvent(events[at]);
      part->OnEnd();
      parted.Fold(std::move(part));
    }
    CHECK(Render(parted, false) == Render(whole, false));
    CHECK(Render(parted, true) == Render(whole, true));
  }
}

TEST_CASE("flow statistics count batches of packed blocks as the events they stand for") {
  // More addresses than the statistics keep the function of, in a random order, so kept ones
  // are replaced and met again; functions of 256 bytes, some without a name.
  auto function_of = [](uint64_t ip) {
    return ip % 0x1000 < 0x100 ? std::string() : "f" + std::to_string(ip / 0x100);
  };
  std::mt19937 random(5);
  std::vector<TraceEvent> events;
  for (int i = 0; i < 30000; ++i) {
    const uint64_t ip = 0x400000 + std::uniform_int_distribution<uint64_t>(0, 20000)(random) * 4;
    const auto end = static_cast<BlockEnd>(std::uniform_int_distribution<int>(0, 12)(random));
    TraceEvent event = Block(ip, 1 + i % 7, end, i % 11 ? 1000 + static_cast<uint64_t>(i) : kUnknownTime);
    event.header.tid = i % 500 < 250 ? 1 : 2;
    events.push_back(event);
    if (i % 997 == 0) {
      TraceGap gap;
      gap.reason = GapReason::kOverflow;
      events.push_back(TraceEvent{EventHeader{}, gap});
    }
  }
  FlowStats one_by_one(function_of);
  for (const TraceEvent& event : events) one_by_one.OnEvent(event);
  std::map<std::string, uint64_t> by_function;
  for (const TraceEvent& event : events)
    if (const auto* block = std::get_if<ExecBlock>(&event.body)) {
      const std::string name = function_of(block->first_ip);
      by_function[name.empty() ? "[unknown]" : name] += block->insns;
    }
  CHECK(one_by_one.insns_by_function() == by_function);
  FlowStats batched(function_of);
  testing::FeedEvents(batched, events, 0, events.size(), true);
  CHECK(Render(batched, false) == Render(one_by_one, false));
  CHECK(Render(batched, true) == Render(one_by_one, true));
  CHECK(batched.insns_by_function().size() > 250);
  FlowStats parted(function_of);
  testing::FeedInParts(parted, events, testing::RandomCuts(events.size(), 40, random), true);
  CHECK(Render(parted, true) == Render(one_by_one, true));
}

TEST_CASE("flow statistics take a batch's times from its clock") {
  struct Doubling : BlockClock {
    uint64_t TimeOf(uint64_t tsc) const override { return 2 * tsc; }
  } clock;
  std::vector<PackedEvent> blocks(3);
  for (size_t i = 0; i < blocks.size(); ++i) PackBlock(Block(0x1000, 2, BlockEnd::kJump, 40 - 10 * i), blocks[i]);
  blocks[1].tsc = kUnknownTime;
  BlockBatch batch;
  batch.blocks = blocks;
  batch.clock = &clock;
  FlowStats stats;
  stats.OnBlocks(batch);
  const std::string json = Render(stats, true);
  CHECK(json.find("\"first_tsc\":20,\"last_tsc\":40") != std::string::npos);
  CHECK(json.find("\"first_time\":40,\"last_time\":80") != std::string::npos);
  CHECK(stats.instructions() == 6);
  CHECK(stats.exits().at("jump") == 3);
}
