#include "decoders/pt/insn_expander.h"

#include <catch2/catch.hpp>

#include "decoders/pt/flow_session.h"
#include "decoders/pt/flow_testing.h"
#include "src/model/event_equality.h"

using namespace ptprof;
using namespace ptprof::pt;
using namespace ptprof::pt::testing;

namespace {

using Collect = CollectingSink;

TraceEvent Block(uint64_t first_ip, uint64_t last_ip, uint32_t insns, uint64_t tsc,
                 uint64_t offset) {
  ExecBlock block;
  block.first_ip = first_ip;
  block.last_ip = last_ip;
  block.insns = insns;
  block.mode = ExecMode::k64Bit;
  TraceEvent event{EventHeader{}, block};
  event.header.tsc = tsc;
  event.header.offset = offset;
  return event;
}

const Instruction& InsnOf(const TraceEvent& event) { return std::get<Instruction>(event.body); }

struct SampleImages {
  TempFile code{SampleProgram()};
  ImageSet images;
  PtImageCache cache{true};
  SampleImages() {
    REQUIRE(images.AddRaw(RawImageSpec{code.path(), 0, UINT64_MAX, kSampleBase}));
    REQUIRE(cache.AddAll(images));
  }
};

}  // namespace

TEST_CASE("A block becomes its instructions: bytes, class, offset, and the time before it",
          "[insn_expander]") {
  SampleImages sample;
  Collect out;
  std::deque<InsnTimeNote> notes;
  InsnExpander expander(out, sample.cache, notes);
  // The sample program: 1000 nop; 1001 je 1005; 1003 nop; 1004 nop; 1005 call 1010; ...
  // 1010 nop; 1011 ret.
  notes.push_back({0, 4});  // the decode starts at time 4
  expander.OnEvent(Block(0x1000, 0x1001, 2, 5, 0x10));
  TraceEvent toggle{EventHeader{}, TraceToggle{}};
  toggle.header.tsc = 6;
  expander.OnEvent(toggle);
  notes.push_back({2, 7});  // the time the events left, which is not the toggle's own
  expander.OnEvent(Block(0x1003, 0x1005, 3, 9, 0x20));
  expander.OnEvent(Block(0x1010, 0x1011, 2, 11, 0x30));  // no event since the last block
  REQUIRE(expander.failure().empty());
  REQUIRE(out.events.size() == 8);
  CHECK(expander.insns() == 7);
  CHECK(expander.passed() == 8);
  const uint64_t ips[] = {0x1000, 0x1001, 0, 0x1003, 0x1004, 0x1005, 0x1010, 0x1011};
  const uint64_t tscs[] = {4, 5, 6, 7, 7, 9, 9, 11};
  const uint64_t offsets[] = {0x10, 0x10, 0, 0x20, 0x20, 0x20, 0x30, 0x30};
  for (size_t i = 0; i < out.events.size(); ++i) {
    INFO("event " << i);
    CHECK(out.events[i].header.tsc == tscs[i]);
    CHECK(out.events[i].header.offset == offsets[i]);
    if (i == 2) {
      CHECK(std::holds_alternative<TraceToggle>(out.events[i].body));
      continue;
    }
    CHECK(InsnOf(out.events[i]).ip == ips[i]);
    CHECK(InsnOf(out.events[i]).mode == ExecMode::k64Bit);
  }
  CHECK(InsnOf(out.events[1]).size == 2);
  CHECK(InsnOf(out.events[1]).bytes[0] == 0x74);  // je
  CHECK(InsnOf(out.events[1]).iclass == BlockEnd::kCondTaken);
  CHECK(InsnOf(out.events[5]).size == 5);
  CHECK(InsnOf(out.events[5]).iclass == BlockEnd::kCall);
  CHECK(InsnOf(out.events[7]).iclass == BlockEnd::kReturn);
  CHECK(InsnOf(out.events[3]).iclass == BlockEnd::kFallThrough);
  CHECK(notes.empty());
}

TEST_CASE("Blocks in a batch expand as the same blocks one by one", "[insn_expander]") {
  SampleImages sample;
  std::vector<PackedEvent> packed;
  for (const TraceEvent& block :
       {Block(0x1000, 0x1001, 2, 5, 0x10), Block(0x1003, 0x1005, 3, 9, 0x20),
        Block(0x1010, 0x1011, 2, 11, 0x30)}) {
    packed.emplace_back();
    PackBlock(block, packed.back());
  }
  Collect batched, single;
  std::deque<InsnTimeNote> notes_batched{{0, 1}, {3, 2}};
  std::deque<InsnTimeNote> notes_single = notes_batched;
  InsnExpander by_batch(batched, sample.cache, notes_batched);
  InsnExpander by_one(single, sample.cache, notes_single);
  by_batch.OnBlocks(BlockBatch{packed, 2, 3, 4});
  for (const PackedEvent& block : packed) {
    TraceEvent event{EventHeader{}, ExecBlock{}};
    UnpackBlock(block, 2, 3, 4, event);
    by_one.OnEvent(event);
  }
  REQUIRE(batched.events.size() == 7);
  REQUIRE(single.events.size() == 7);
  for (size_t i = 0; i < 7; ++i) CHECK(SameEvent(batched.events[i], single.events[i]));
  // The note at the fourth instruction (1004, inside the second block) moves its time.
  CHECK(batched.events[2].header.tsc == 5);
  CHECK(batched.events[3].header.tsc == 2);
  CHECK(batched.events[0].header.cpu == 2);
  CHECK(batched.events[0].header.tid == 4);
}

TEST_CASE("Image notes say which address space's code each block is read from",
          "[insn_expander]") {
  SampleImages sample;
  // A second address space with other code at the same addresses: one-byte nops only.
  TempFile nops(std::vector<uint8_t>(0x40, 0x90));
  ImageSet other;
  REQUIRE(other.AddRaw(RawImageSpec{nops.path(), 0, UINT64_MAX, kSampleBase}));
  const size_t second = sample.cache.AddImage();
  REQUIRE(sample.cache.Add(other.sections()[0], second));
  Collect out;
  std::deque<InsnTimeNote> notes{{0, 1}};
  std::deque<InsnImageNote> images{{0, second}, {2, 0}, {4, second}};
  InsnExpander expander(out, sample.cache, notes, 0, &images);
  // Each block is 0x1000 to 0x1001: nop; je in the sample program, nop; nop among the nops.
  for (int i = 0; i < 3; ++i) expander.OnEvent(Block(0x1000, 0x1001, 2, 2 + i, 0x10));
  REQUIRE(expander.failure().empty());
  REQUIRE(out.events.size() == 6);
  CHECK(images.empty());
  const uint8_t second_bytes[] = {0x90, 0x74, 0x90};  // per block
  for (size_t block = 0; block < 3; ++block) {
    INFO("block " << block);
    CHECK(InsnOf(out.events[2 * block]).bytes[0] == 0x90);
    CHECK(InsnOf(out.events[2 * block + 1]).bytes[0] == second_bytes[block]);
    CHECK(InsnOf(out.events[2 * block + 1]).size == (block == 1 ? 2 : 1));
  }
}

TEST_CASE("A block the expander cannot list stops it, naming the block", "[insn_expander]") {
  SampleImages sample;
  Collect out;
  std::deque<InsnTimeNote> notes{{0, 1}};
  InsnExpander expander(out, sample.cache, notes);
  expander.OnEvent(Block(0x1000, 0x1001, 2, 5, 0x10));
  expander.OnEvent(Block(0x7000, 0x7004, 2, 6, 0x20));  // no code there
  CHECK(expander.failure().find("0x7000") != std::string::npos);
  CHECK(expander.failure().find("0x20") != std::string::npos);
  expander.OnEvent(Block(0x1010, 0x1011, 2, 11, 0x30));  // nothing more goes on
  CHECK(out.events.size() == 2);
  CHECK(expander.passed() == 2);

  // Instructions that do not end where the block says it ends.
  Collect out2;
  std::deque<InsnTimeNote> notes2{{0, 1}};
  InsnExpander wrong(out2, sample.cache, notes2);
  wrong.OnEvent(Block(0x1000, 0x1002, 2, 5, 0x10));
  CHECK(wrong.failure().find("do not end") != std::string::npos);
  CHECK(out2.events.empty());

  // A block at the start with no time noted before it.
  Collect out3;
  std::deque<InsnTimeNote> none;
  InsnExpander untimed(out3, sample.cache, none);
  untimed.OnEvent(Block(0x1000, 0x1001, 2, 5, 0x10));
  CHECK(untimed.failure().find("time before it is not known") != std::string::npos);
  CHECK(out3.events.empty());
}

TEST_CASE("The fast engine's instructions are libipt's instruction decoder's, on one thread and "
          "in segments",
          "[insn_expander]") {
  SampleImages sample;
  std::vector<uint8_t> trace;
  for (int i = 0; i < 30; ++i) {
    auto part = SampleTrace(0x1000 + 0x100 * static_cast<uint64_t>(i));
    trace.insert(trace.end(), part.begin(), part.end());
  }
  auto decode = [&](FlowEngine engine, unsigned jobs, Collect& out) {
    FlowRequest request;
    request.engine = engine;
    request.insns = true;
    request.jobs = jobs;
    request.segment_bytes = 100;
    auto summary = DecodeFlow(trace, sample.images, request, out);
    REQUIRE(summary);
    return *summary;
  };
  Collect libipt;
  const FlowSummary reference = decode(FlowEngine::kLibipt, 1, libipt);
  REQUIRE(reference.insns > 30 * 5);
  for (unsigned jobs : {1u, 2u}) {
    INFO("jobs " << jobs);
    Collect fast;
    const FlowSummary summary = decode(FlowEngine::kFast, jobs, fast);
    CHECK(summary.libipt_segments == 0);
    CHECK(summary.fast_segments == summary.segments);
    CHECK(summary.insns == reference.insns);
    REQUIRE(fast.events.size() == libipt.events.size());
    for (size_t i = 0; i < fast.events.size(); ++i) {
      INFO("event " << i);
      CHECK(SameEvent(fast.events[i], libipt.events[i]));
    }
  }
}
