#include "decoders/etm/insn_expansion.h"

#include <thread>

#include <catch2/catch.hpp>

#include "decoders/etm/arm_disassembler.h"
#include "src/model/collecting_sink.h"

using namespace ptprof;
using namespace ptprof::etm;

namespace {

using Collect = testing::CollectingSink;

// Takes parts and refuses those holding no instruction.
struct PartedCollect : PartedSink {
  std::vector<TraceEvent> events;
  int folded = 0;
  std::unique_ptr<EventSink> NewPart() const override { return std::make_unique<Collect>(); }
  std::string Refusal(const EventSink& part) const override {
    for (const TraceEvent& e : static_cast<const Collect&>(part).events)
      if (std::holds_alternative<Instruction>(e.body)) return "";
    return "no instruction";
  }
  void Fold(std::unique_ptr<EventSink> part) override {
    auto& c = static_cast<Collect&>(*part);
    CHECK(c.ended);
    events.insert(events.end(), c.events.begin(), c.events.end());
    ++folded;
  }
  void OnEvent(const TraceEvent& e) override { events.push_back(e); }
};

// nop; nop; bl +8 at 0x1000 (A64, little endian)
RangeExpander Expander() {
  std::vector<uint8_t> code = {0x1f, 0x20, 0x03, 0xd5, 0x1f, 0x20, 0x03, 0xd5, 0x02, 0x00, 0x00, 0x94};
  return RangeExpander({MemoryImage{0x1000, "", std::make_shared<const std::vector<uint8_t>>(code), "t"}});
}

TraceEvent Block() {
  return TraceEvent{EventHeader{}, ExecBlock{0x1000, 0x1008, 3, 4, BlockEnd::kCall, ExecMode::kA64,
                                             false, false, kUnknownTime}};
}

}  // namespace

TEST_CASE("blocks become their instructions on the way to a consumer of one stream") {
  const RangeExpander expander = Expander();
  Collect next;
  InsnExpansion expansion(expander, next);
  CHECK_FALSE(expansion.TakesParts());
  expansion.OnEvent(Block());
  expansion.OnEvent(TraceEvent{EventHeader{}, TraceGap{}});
  expansion.OnEnd();
  REQUIRE(next.events.size() == 4);
  CHECK(std::get<Instruction>(next.events[2].body).ip == 0x1008);
  CHECK(std::holds_alternative<TraceGap>(next.events[3].body));
  CHECK(next.ended);
}

TEST_CASE("in parts, each part expands into a part of the consumer, folded or refused as its") {
  const RangeExpander expander = Expander();
  PartedCollect next;
  InsnExpansion expansion(expander, next);
  REQUIRE(expansion.TakesParts());
  std::unique_ptr<EventSink> first = expansion.NewFirstPart();
  std::unique_ptr<EventSink> gap_only = expansion.NewPart();
  // Parts are fed on other threads, each with its own disassembler.
  std::thread a([&] {
    first->OnEvent(Block());
    first->OnEnd();
    CHECK(ArmDisassembler::FormatOnThisThread(Instruction{}) == "");
  });
  std::thread b([&] {
    gap_only->OnEvent(TraceEvent{EventHeader{}, TraceGap{}});
    gap_only->OnEnd();
  });
  a.join();
  b.join();
  CHECK(expansion.CanFold(*first));
  CHECK(expansion.Refusal(*gap_only) == "no instruction");
  expansion.Fold(std::move(first));
  CHECK(next.folded == 1);
  REQUIRE(next.events.size() == 3);
  CHECK(std::get<Instruction>(next.events[0].body).ip == 0x1000);
}
