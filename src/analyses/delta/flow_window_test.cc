#include "src/analyses/delta/flow_window.h"

#include <catch2/catch.hpp>

#include <random>

#include "src/analyses/support/random_flow_testing.h"

using namespace ptprof;
using namespace ptprof::delta;

namespace {

class Collect : public EventSink {
 public:
  void OnEvent(const TraceEvent& e) override {
    if (const auto* b = std::get_if<ExecBlock>(&e.body)) ips.push_back(b->first_ip);
  }
  std::vector<uint64_t> ips;
};

TraceEvent Block(uint64_t ip, uint32_t insns, int32_t cpu, uint64_t offset) {
  ExecBlock b;
  b.first_ip = ip;
  b.insns = insns;
  TraceEvent e{EventHeader{}, b};
  e.header.cpu = cpu;
  e.header.offset = offset;
  e.header.tsc = offset * 2;
  return e;
}

}  // namespace

TEST_CASE("an interval window passes the blocks of its lane between its positions") {
  Collect out;
  WindowSpec spec;
  spec.kind = WindowSpec::Kind::kInterval;
  spec.lane = 1;
  spec.first_position = 5;
  spec.last_position = 9;
  FlowWindow window(spec, out);
  window.OnEvent(Block(0xa, 5, 1, 0));   // positions 0..4
  window.OnEvent(Block(0xb, 3, 0, 0));   // another CPU
  window.OnEvent(Block(0xc, 3, 1, 0));   // 5..7
  window.OnEvent(Block(0xd, 3, 1, 0));   // 8..10
  window.OnEvent(Block(0xe, 3, 1, 0));   // 11..13
  CHECK(out.ips == std::vector<uint64_t>{0xc, 0xd});
  CHECK(window.found());
}

TEST_CASE("an offset or time window passes the context around its first event") {
  Collect out;
  WindowSpec spec;
  spec.kind = WindowSpec::Kind::kOffset;
  spec.offset = 0x30;
  spec.context = 1;
  FlowWindow window(spec, out);
  for (uint64_t i = 0; i < 8; ++i) window.OnEvent(Block(i, 1, 0, i * 0x10));
  CHECK(out.ips == std::vector<uint64_t>{2, 3, 4});

  Collect timed;
  WindowSpec by_time;
  by_time.kind = WindowSpec::Kind::kTime;
  by_time.time = 100;
  by_time.context = 2;
  by_time.time_of = [](const EventHeader& h) -> std::optional<double> { return h.tsc; };
  FlowWindow time_window(by_time, timed);
  for (uint64_t i = 0; i < 8; ++i) time_window.OnEvent(Block(i, 1, 0, i * 0x10));  // tsc 0, 32, 64, 96, 128
  CHECK(timed.ips == std::vector<uint64_t>{2, 3, 4, 5, 6});

  Collect none;
  WindowSpec missing;
  missing.offset = 0x1000;
  FlowWindow empty(missing, none);
  empty.OnEvent(Block(1, 1, 0, 0));
  CHECK_FALSE(empty.found());
}

namespace {

// Collects what passed, and the order.
class CollectAll : public EventSink {
 public:
  void OnEvent(const TraceEvent& e) override {
    const auto* b = std::get_if<ExecBlock>(&e.body);
    ips.push_back(b ? b->first_ip : UINT64_MAX);
  }
  std::vector<uint64_t> ips;
};

}  // namespace

TEST_CASE("a window in parts passes what it passes whole, the parts it lies in decoded again") {
  std::mt19937 random(3);
  auto pick = [&](uint64_t n) { return std::uniform_int_distribution<uint64_t>(0, n - 1)(random); };
  size_t refused = 0, folded = 0;
  for (int trial = 0; trial < 300; ++trial) {
    // Blocks of threads 1 and 2 (some of no instructions), rising offsets and TSCs.
    std::vector<TraceEvent> events;
    uint64_t offset = 0;
    for (uint64_t i = 0; i < 200; ++i) {
      offset += pick(0x20);
      TraceEvent e = Block(i, static_cast<uint32_t>(pick(6)), 0, offset);
      e.header.tid = 1 + static_cast<int32_t>(pick(2));
      events.push_back(e);
    }
    WindowSpec spec;
    spec.kind = static_cast<WindowSpec::Kind>(trial % 3);
    spec.lane = 1;
    spec.per_thread = true;
    spec.first_position = pick(300);
    spec.last_position = spec.first_position + pick(40);
    spec.offset = pick(offset + 0x40);
    spec.time = static_cast<double>(pick(2 * offset + 0x80));
    spec.time_of = [](const EventHeader& h) -> std::optional<double> { return h.tsc; };
    spec.context = pick(6);
    CollectAll whole_out;
    FlowWindow whole(spec, whole_out);
    testing::FeedEvents(whole, events, 0, events.size(), false);
    CollectAll batched_out;  // in batches, one stream
    FlowWindow whole_batched(spec, batched_out);
    testing::FeedEvents(whole_batched, events, 0, events.size(), true);
    CHECK(batched_out.ips == whole_out.ips);
    for (const bool batched : {false, true}) {
      CollectAll parts_out;
      FlowWindow parted(spec, parts_out);
      const auto cuts = testing::RandomCuts(events.size(), 1 + pick(20), random);
      const testing::PartsFolded count = testing::FeedInParts(parted, events, cuts, batched);
      INFO("trial " << trial << ", batched " << batched);
      CHECK(parts_out.ips == whole_out.ips);
      CHECK(parted.found() == whole.found());
      CHECK(count.unexplained == 0);
      refused += count.refused;
      folded += count.folded;
    }
  }
  CHECK(refused > 100);
  CHECK(folded > 2 * refused);  // a window is short: most parts fold, even cut this small
}
