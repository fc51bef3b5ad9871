#include "src/analyses/stackdiff/flow_selection.h"

#include <random>
#include <vector>

#include <catch2/catch.hpp>

#include "src/analyses/support/random_flow_testing.h"
#include "src/model/collecting_sink.h"

namespace ptprof::stackdiff {
namespace {

using Collect = ptprof::testing::CollectingSink;

TraceEvent Block(uint64_t offset, int32_t tid, uint64_t time_ns = kUnknownTime) {
  TraceEvent event;
  event.header.offset = offset;
  event.header.tid = tid;
  event.header.cpu = 0;
  event.header.time_ns = time_ns;
  event.body = ExecBlock{};
  return event;
}

TEST_CASE("interval ranges parse as offsets or times, and bad ones say what is expected") {
  auto offsets = ParseFlowRange("0x100..512");
  REQUIRE(offsets);
  CHECK(offsets->kind == FlowRange::Kind::kOffset);
  CHECK(offsets->from == 256);
  CHECK(offsets->to == 512);
  auto times = ParseFlowRange("1500ns..2500.5ns");
  REQUIRE(times);
  CHECK(times->kind == FlowRange::Kind::kTime);
  CHECK(times->to == 2500.5);
  CHECK_FALSE(ParseFlowRange("100"));
  CHECK_FALSE(ParseFlowRange("1500ns..2500"));
  CHECK_FALSE(ParseFlowRange("x..y"));
  auto backwards = ParseFlowRange("0x200..0x100");
  REQUIRE_FALSE(backwards);
  CHECK(backwards.error().message.find("TO is before FROM") != std::string::npos);
}

TEST_CASE("the selection passes one thread within an offset range") {
  Collect out;
  FlowSelectionSpec spec;
  spec.tid = 7;
  spec.range = *ParseFlowRange("0x10..0x20");
  FlowSelection selection(spec, out);
  for (auto [offset, tid] : std::vector<std::pair<uint64_t, int32_t>>{
           {0x8, 7}, {0x10, 7}, {0x18, 8}, {0x20, 7}, {0x28, 7}})
    selection.OnEvent(Block(offset, tid));
  REQUIRE(out.events.size() == 2);
  CHECK(out.events[0].header.offset == 0x10);
  CHECK(out.events[1].header.offset == 0x20);
  CHECK(selection.events_seen() == 5);
  CHECK(selection.blocks_passed() == 2);
}

TEST_CASE("a batch of blocks passes whole unless the range cuts it, as block by block") {
  // Counts the batches it is given whole, and every block.
  struct Batches : Collect {
    size_t whole = 0;
    void OnBlocks(const BlockBatch& batch) override {
      ++whole;
      EventSink::OnBlocks(batch);
    }
  };
  std::vector<PackedEvent> blocks(4);
  for (size_t i = 0; i < blocks.size(); ++i) {
    blocks[i].offset = 0x10 + 8 * i;  // 0x10, 0x18, 0x20, 0x28
    blocks[i].insns = 1;
  }
  BlockBatch batch;
  batch.blocks = blocks;
  batch.tid = 7;
  batch.cpu = 0;
  struct Case {
    std::optional<int32_t> tid;
    const char* range;
    size_t whole, passed;
  };
  for (const Case& c : {Case{std::nullopt, nullptr, 1, 4}, Case{7, "0x10..0x28", 1, 4},
                        Case{8, nullptr, 0, 0}, Case{7, "0x14..0x20", 0, 2},
                        Case{std::nullopt, "0ns..100ns", 0, 0}}) {
    INFO("tid " << c.tid.value_or(-1) << " range " << (c.range ? c.range : "none"));
    Batches out;
    FlowSelectionSpec spec;
    spec.tid = c.tid;
    if (c.range) spec.range = *ParseFlowRange(c.range);
    FlowSelection selection(spec, out);
    selection.OnBlocks(batch);
    CHECK(out.whole == c.whole);
    CHECK(out.events.size() == c.passed);
    CHECK(selection.events_seen() == 4);
    CHECK(selection.blocks_passed() == c.passed);
  }
}

TEST_CASE("a time range carries the last time over events that have none") {
  Collect out;
  FlowSelectionSpec spec;
  spec.range = *ParseFlowRange("100ns..200ns");
  spec.time_of = [](const EventHeader& h) -> std::optional<double> {
    if (h.time_ns == kUnknownTime) return std::nullopt;
    return static_cast<double>(h.time_ns);
  };
  FlowSelection selection(spec, out);
  selection.OnEvent(Block(1, 1));        // no time yet: out
  selection.OnEvent(Block(2, 1, 50));    // before
  selection.OnEvent(Block(3, 1, 150));   // in
  selection.OnEvent(Block(4, 1));        // takes 150: in
  selection.OnEvent(Block(5, 1, 250));   // after
  selection.OnEvent(Block(6, 1));        // takes 250: out
  REQUIRE(out.events.size() == 2);
  CHECK(out.events[0].header.offset == 3);
  CHECK(out.events[1].header.offset == 4);
}

// Collects what passed; in parts, each part its own, appended at the fold.
struct CollectInParts : PartedSink {
  std::vector<uint64_t> offsets;
  void OnEvent(const TraceEvent& event) override { offsets.push_back(event.header.offset); }
  std::unique_ptr<EventSink> NewPart() const override { return std::make_unique<CollectInParts>(); }
  void Fold(std::unique_ptr<EventSink> part) override {
    const auto& other = static_cast<const CollectInParts&>(*part);
    offsets.insert(offsets.end(), other.offsets.begin(), other.offsets.end());
  }
};

TEST_CASE("a time range in parts passes what it passes whole; a part whose first events take "
          "their time from before it inside the range is refused") {
  FlowSelectionSpec spec;
  spec.range = *ParseFlowRange("300ns..600ns");
  spec.time_of = [](const EventHeader& h) -> std::optional<double> {
    if (h.time_ns == kUnknownTime) return std::nullopt;
    return static_cast<double>(h.time_ns);
  };
  std::mt19937 random(5);
  size_t refused = 0;
  for (int trial = 0; trial < 200; ++trial) {
    // Two CPUs, rising times, a third of the events without one; thread 1 or 2.
    std::vector<TraceEvent> events;
    uint64_t now = 0;
    for (uint64_t i = 0; i < 120; ++i) {
      now += std::uniform_int_distribution<uint64_t>(0, 15)(random);
      const bool timed = std::uniform_int_distribution<int>(0, 2)(random) > 0;
      TraceEvent e = Block(i, 1 + static_cast<int32_t>(i % 2), timed ? now : kUnknownTime);
      e.header.cpu = std::uniform_int_distribution<int32_t>(0, 1)(random);
      events.push_back(e);
    }
    for (const std::optional<int32_t> tid : {std::optional<int32_t>{}, std::optional<int32_t>{1}}) {
      spec.tid = tid;
      CollectInParts whole_out, parts_out;
      FlowSelection whole(spec, whole_out);
      testing::FeedEvents(whole, events, 0, events.size(), false);
      FlowSelection parted(spec, parts_out);
      REQUIRE(parted.TakesParts());
      const auto cuts = testing::RandomCuts(events.size(), 8, random);
      refused += testing::FeedInParts(parted, events, cuts, false).refused;
      INFO("trial " << trial);
      CHECK(parts_out.offsets == whole_out.offsets);
      CHECK(parted.events_seen() == whole.events_seen());
      CHECK(parted.events_passed() == whole.events_passed());
    }
  }
  CHECK(refused > 0);  // the refusal was needed, and its redo gave the same
}

}  // namespace
}  // namespace ptprof::stackdiff
