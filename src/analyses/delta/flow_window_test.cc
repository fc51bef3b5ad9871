#include "src/analyses/delta/flow_window.h"

#include <catch2/catch.hpp>

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
