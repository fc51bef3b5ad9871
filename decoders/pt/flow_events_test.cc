#include "decoders/pt/flow_events.h"

#include <vector>

#include <catch2/catch.hpp>

#include "decoders/pt/flow_session.h"
#include "decoders/pt/flow_testing.h"

using namespace ptprof;
using namespace ptprof::pt;
using namespace ptprof::pt::testing;

namespace {

class Collect : public EventSink {
 public:
  void OnEvent(const TraceEvent& event) override { events.push_back(event); }
  void OnEnd() override { ended = true; }
  std::vector<TraceEvent> events;
  bool ended = false;

  std::vector<ExecBlock> Blocks() const {
    std::vector<ExecBlock> out;
    for (const auto& e : events)
      if (auto* b = std::get_if<ExecBlock>(&e.body)) out.push_back(*b);
    return out;
  }
};

Collect Decode(const std::vector<uint8_t>& trace, bool insns) {
  TempFile code(SampleProgram());
  ImageSet images;
  REQUIRE(images.AddRaw(RawImageSpec{code.path(), 0, UINT64_MAX, kSampleBase}));
  FlowRequest request;
  request.insns = insns;
  request.cpu = 3;
  Collect sink;
  auto summary = DecodeFlow(trace, images, request, sink);
  REQUIRE(summary);
  CHECK(summary->has_psb);
  CHECK(sink.ended);
  return sink;
}

}  // namespace

TEST_CASE("blocks are contiguous runs and say how they ended") {
  Collect sink = Decode(SampleTrace(0x1234), false);
  auto blocks = sink.Blocks();
  REQUIRE(blocks.size() == 4);
  CHECK(blocks[0].first_ip == 0x1000);
  CHECK(blocks[0].last_ip == 0x1001);
  CHECK(blocks[0].insns == 2);
  CHECK(blocks[0].last_insn_size == 2);
  CHECK(blocks[0].end == BlockEnd::kCondTaken);  // the next block starts at 1005, not 1003
  CHECK(blocks[1].first_ip == 0x1005);
  CHECK(blocks[1].end == BlockEnd::kCall);
  CHECK(blocks[2].first_ip == 0x1010);
  CHECK(blocks[2].last_ip == 0x1011);
  CHECK(blocks[2].end == BlockEnd::kReturn);
  CHECK(blocks[3].first_ip == 0x100a);
  CHECK(blocks[3].end == BlockEnd::kSyscall);
  CHECK(blocks[3].mode == ExecMode::k64Bit);

  // Around the blocks: enabled first, disabled last; headers carry the cpu and the raw TSC.
  REQUIRE(sink.events.size() >= 6);
  auto* enabled = std::get_if<TraceToggle>(&sink.events.front().body);
  REQUIRE(enabled);
  CHECK(enabled->kind == TraceToggle::Kind::kEnabled);
  CHECK(enabled->ip == 0x1000);
  auto* disabled = std::get_if<TraceToggle>(&sink.events.back().body);
  REQUIRE(disabled);
  CHECK(disabled->kind == TraceToggle::Kind::kDisabled);
  CHECK_FALSE(disabled->has_ip);
  for (const auto& e : sink.events) {
    CHECK(e.header.cpu == 3);
    CHECK(e.header.time_ns == kUnknownTime);  // no conversion without sideband
  }
  CHECK(sink.events[1].header.tsc == 0x1234);
}

TEST_CASE("a not-taken conditional branch") {
  PacketWriter w;
  w.Psb().ModeExec(ptem_64bit).PsbEnd().TipPge(kSampleBase);
  w.Tnt(0b01, 2);  // je not taken; nops; call; ret compressed
  w.TipPgdSuppressed();
  auto blocks = Decode(w.bytes(), false).Blocks();
  REQUIRE(blocks.size() >= 2);
  CHECK(blocks[0].end == BlockEnd::kCondNotTaken);
  CHECK(blocks[1].first_ip == 0x1003);
}

TEST_CASE("instructions carry their bytes and class") {
  Collect sink = Decode(SampleTrace(), true);
  std::vector<Instruction> insns;
  for (const auto& e : sink.events)
    if (auto* i = std::get_if<Instruction>(&e.body)) insns.push_back(*i);
  REQUIRE(insns.size() == 6);
  CHECK(insns[1].ip == 0x1001);
  CHECK(insns[1].iclass == BlockEnd::kCondTaken);
  CHECK(insns[2].iclass == BlockEnd::kCall);
  CHECK(insns[2].size == 5);
  CHECK(insns[2].bytes[0] == 0xe8);
  CHECK(insns[4].iclass == BlockEnd::kReturn);
  CHECK(insns[5].iclass == BlockEnd::kSyscall);
  CHECK(insns[0].iclass == BlockEnd::kFallThrough);
}

TEST_CASE("errors become gaps with libipt's words, offset and IP") {
  PacketWriter bad;
  bad.Psb().ModeExec(ptem_64bit).PsbEnd().TipPge(0x5000).TipPgdSuppressed();
  std::vector<uint8_t> trace = bad.bytes();
  auto good = SampleTrace();
  for (int i = 0; i < 2; ++i) trace.insert(trace.end(), good.begin(), good.end());
  Collect sink = Decode(trace, false);
  const TraceGap* gap = nullptr;
  uint64_t offset = 0;
  for (const auto& e : sink.events) {
    if (auto* g = std::get_if<TraceGap>(&e.body); g && !gap) {
      gap = g;
      offset = e.header.offset;
    }
  }
  REQUIRE(gap);
  CHECK(gap->reason == GapReason::kNoImage);
  CHECK(gap->detail == "no memory mapped at this address");
  CHECK(gap->has_ip);
  CHECK(gap->ip == 0x5000);
  CHECK(offset > 0);
  CHECK(sink.Blocks().size() == 4);  // the last segment decodes
}

TEST_CASE("libipt events map onto the model") {
  pt_event ev{};
  EventBody body;
  ev.type = ptev_overflow;
  ev.variant.overflow.ip = 0x42;
  REQUIRE(EventToModel(ev, body));
  REQUIRE(std::holds_alternative<TraceGap>(body));
  CHECK(std::get<TraceGap>(body).reason == GapReason::kOverflow);
  CHECK(std::get<TraceGap>(body).ip == 0x42);

  ev = pt_event{};
  ev.type = ptev_cbr;
  ev.variant.cbr.ratio = 0x1f;
  REQUIRE(EventToModel(ev, body));
  CHECK(std::get<PowerEvent>(body).kind == PowerEvent::Kind::kCoreBusRatio);
  CHECK(std::get<PowerEvent>(body).value == 0x1f);

  ev = pt_event{};
  ev.type = ptev_ptwrite;
  ev.variant.ptwrite.payload = 0xabcd;
  ev.ip_suppressed = 1;
  REQUIRE(EventToModel(ev, body));
  CHECK(std::get<Marker>(body).kind == Marker::Kind::kPtwrite);
  CHECK(std::get<Marker>(body).value == 0xabcd);
  CHECK_FALSE(std::get<Marker>(body).has_ip);

  ev = pt_event{};
  ev.type = ptev_async_paging;
  ev.variant.async_paging.cr3 = 0x1000;
  ev.variant.async_paging.non_root = 1;
  ev.variant.async_paging.ip = 0x2000;
  REQUIRE(EventToModel(ev, body));
  CHECK(std::get<ContextSwitch>(body).kind == ContextSwitch::Kind::kPaging);
  CHECK(std::get<ContextSwitch>(body).non_root);
  CHECK(std::get<ContextSwitch>(body).ip == 0x2000);

  ev = pt_event{};
  ev.type = ptev_tsx;
  ev.variant.tsx.aborted = 1;
  REQUIRE(EventToModel(ev, body));
  CHECK(std::get<Marker>(body).kind == Marker::Kind::kTsxAbort);

  ev = pt_event{};
  ev.type = ptev_exec_mode;
  ev.status_update = 1;
  CHECK_FALSE(EventToModel(ev, body));  // status updates only confirm what is known

  ev = pt_event{};
  ev.type = ptev_async_branch;
  CHECK_FALSE(EventToModel(ev, body));  // it ends the previous block instead
}

TEST_CASE("a trace cut in the middle of a packet ends with a truncation gap") {
  std::vector<uint8_t> trace = SampleTrace();
  size_t cut_at = trace.size();
  PacketWriter psb;
  psb.Psb();
  trace.insert(trace.end(), psb.bytes().begin(), psb.bytes().begin() + 7);
  Collect sink = Decode(trace, false);
  REQUIRE_FALSE(sink.events.empty());
  auto* gap = std::get_if<TraceGap>(&sink.events.back().body);
  REQUIRE(gap);
  CHECK(gap->reason == GapReason::kTruncated);
  CHECK(sink.events.back().header.offset == cut_at);
  CHECK(sink.Blocks().size() == 4);

  Collect whole = Decode(SampleTrace(), false);
  for (const auto& e : whole.events) CHECK_FALSE(std::holds_alternative<TraceGap>(e.body));
}

namespace {

// A block as libipt's block decoder reports it, in the sample program's section.
pt_block Block(uint64_t ip, uint64_t end_ip, uint16_t ninsn, int isid) {
  pt_block b{};
  b.ip = ip;
  b.end_ip = end_ip;
  b.ninsn = ninsn;
  b.isid = isid;
  b.mode = ptem_64bit;
  b.iclass = ptic_other;
  return b;
}

}  // namespace

TEST_CASE("a block split in straight-line code is joined with its continuation") {
  TempFile code(SampleProgram());
  ImageSet images;
  REQUIRE(images.AddRaw(RawImageSpec{code.path(), 0, UINT64_MAX, kSampleBase}));
  PtImageCache cache;
  REQUIRE(cache.AddAll(images));
  uint8_t byte = 0;
  int isid = 1;
  for (; isid < 8 && cache.Read(isid, kSampleBase, &byte, 1) <= 0; ++isid) {
  }
  REQUIRE(cache.Read(isid, kSampleBase, &byte, 1) == 1);

  SECTION("1003 nop | 1004 nop; 1005 call: one block of three") {
    Collect sink;
    FlowToModel model(sink, cache, FlowModelOptions{});
    model.OnBlock(Block(0x1003, 0x1003, 1, isid), FlowStep{0x40, 0x41, 100});
    model.OnBlock(Block(0x1004, 0x1005, 2, isid), FlowStep{0x48, 0x49, 200});
    model.OnBlock(Block(0x1010, 0x1010, 1, isid), FlowStep{0x50, 0x51, 300});
    model.Finish();
    auto blocks = sink.Blocks();
    REQUIRE(blocks.size() == 2);
    CHECK(blocks[0].first_ip == 0x1003);
    CHECK(blocks[0].last_ip == 0x1005);
    CHECK(blocks[0].insns == 3);
    CHECK(blocks[0].last_insn_size == 5);
    CHECK(blocks[0].end == BlockEnd::kCall);
    CHECK(sink.events[0].header.offset == 0x40);  // where the joined block began
    CHECK(sink.events[0].header.tsc == 200u);     // the time after its last part
    CHECK(model.counts().blocks == 2);
    CHECK(model.counts().insns == 4);
  }
  SECTION("an event between the parts keeps them apart") {
    Collect sink;
    FlowToModel model(sink, cache, FlowModelOptions{});
    model.OnBlock(Block(0x1003, 0x1003, 1, isid), FlowStep{0x40, 0x41, 100});
    pt_event ev{};
    ev.type = ptev_cbr;
    ev.variant.cbr.ratio = 9;
    model.OnEvent(ev, 0x44);
    CHECK(model.counts().passed == 0);  // the block waits to learn how it ends, the cbr with it
    model.OnBlock(Block(0x1004, 0x1005, 2, isid), FlowStep{0x48, 0x49, 200});
    CHECK(model.counts().passed == 2);
    model.Finish();
    auto blocks = sink.Blocks();
    REQUIRE(blocks.size() == 2);
    CHECK(blocks[0].end == BlockEnd::kFallThrough);
    CHECK(model.counts().passed == sink.events.size());
  }
  SECTION("a block that does not continue the held one is not joined") {
    Collect sink;
    FlowToModel model(sink, cache, FlowModelOptions{});
    model.OnBlock(Block(0x1003, 0x1003, 1, isid), FlowStep{0x40, 0x41, 100});
    model.OnBlock(Block(0x1010, 0x1011, 2, isid), FlowStep{0x48, 0x49, 200});
    model.Finish();
    CHECK(sink.Blocks().size() == 2);
    CHECK(sink.Blocks()[0].end == BlockEnd::kUnknown);
  }
}

namespace {

// Keeps, of every batch, where its runs lie and what they name.
class RunsSeen : public Collect {
 public:
  struct Seen {
    size_t first;
    uint32_t count;
    const void* run;
    uint64_t source;
  };
  void OnBlocks(const BlockBatch& batch) override {
    for (const BatchRun& run : batch.runs)
      runs.push_back({static_cast<size_t>(run.at - batch.blocks.data()) + events.size(), run.count,
                      run.run, batch.run_source});
    EventSink::OnBlocks(batch);  // the blocks one by one, into events
  }
  std::vector<Seen> runs;
};

// A run of `n` blocks of two instructions at 0x2000, 0x2010, ..., each ending in a taken
// conditional branch.
std::vector<RunBlock> CondRun(size_t n) {
  std::vector<RunBlock> run(n);
  for (size_t i = 0; i < run.size(); ++i) {
    run[i].first_ip = 0x2000 + 0x10 * i;
    run[i].span = 4;
    run[i].insns = 2;
    run[i].last_insn_size = 2;
    run[i].end = static_cast<uint8_t>(BlockEnd::kCondTaken);
    run[i].mode = static_cast<uint8_t>(ExecMode::k64Bit);
  }
  return run;
}

X86Insn NearCall() {
  X86Insn call{};
  call.length = 5;
  call.kind = X86Kind::kCallNear;
  return call;
}

}  // namespace

TEST_CASE("a batch says which of its blocks are a run's, the held last one with them") {
  PtImageCache cache;
  const std::vector<RunBlock> run = CondRun(5);
  const X86Insn call = NearCall();
  for (uint64_t source : {uint64_t{0}, uint64_t{42}}) {
    INFO("run source " << source);
    RunsSeen sink;
    FlowModelOptions marking;
    marking.mark_runs = true;
    FlowToModel model(sink, cache, marking);
    model.SetRunSource(source);
    WalkedBlock first;
    first.ip = 0x1000;
    first.end_ip = 0x1004;
    first.ninsn = 2;
    first.mode = ptem_64bit;
    first.has_tsc = true;
    first.tsc = 7;
    first.offset = 0x10;
    first.last = &call;
    model.OnWalkedBlock(first);
    REQUIRE(model.TakesRunBlocks());
    model.TakeRun(run.data(), 5, 10, X86Kind::kCondJump, 0x2044, 0x20, 0x28, true, 9);
    model.TakeRun(run.data(), 2, 4, X86Kind::kCondJump, 0x2014, 0x30, 0x38, true, 11);
    model.Finish();
    REQUIRE(sink.Blocks().size() == 8);
    if (source == 0) {
      CHECK(sink.runs.empty());  // no source: no runs
      continue;
    }
    // Not asked for: none either.
    RunsSeen unasked;
    FlowToModel plain(unasked, cache, FlowModelOptions{});
    plain.SetRunSource(source);
    plain.OnWalkedBlock(first);
    plain.TakeRun(run.data(), 5, 10, X86Kind::kCondJump, 0x2044, 0x20, 0x28, true, 9);
    plain.Finish();
    CHECK(unasked.Blocks().size() == 6);
    CHECK(unasked.runs.empty());
    // The first run's five blocks, its last (held until the next run came) with them; the
    // second, of two, is too short.
    REQUIRE(sink.runs.size() == 1);
    CHECK(sink.runs[0].first == 1);
    CHECK(sink.runs[0].count == 5);
    CHECK(sink.runs[0].run == run.data());
    CHECK(sink.runs[0].source == 42);
    for (size_t i = 0; i < 5; ++i) CHECK(sink.Blocks()[1 + i].first_ip == run[i].first_ip);
  }
}

TEST_CASE("a run whose held last block goes in the next batch is marked without it") {
  PtImageCache cache;
  const std::vector<RunBlock> run = CondRun(4);
  const X86Insn call = NearCall();
  RunsSeen sink;
  FlowModelOptions marking;
  marking.mark_runs = true;
  FlowToModel model(sink, cache, marking);
  model.SetRunSource(42);
  WalkedBlock first;
  first.ip = 0x1000;
  first.end_ip = 0x1004;
  first.ninsn = 2;
  first.mode = ptem_64bit;
  first.last = &call;
  model.OnWalkedBlock(first);
  // After 128 runs of 4 the held block is the batch's 513th: the batch goes on with 512, and
  // the held block (the 128th run's last) in the next.
  for (int i = 0; i < 130; ++i)
    model.TakeRun(run.data(), 4, 8, X86Kind::kCondJump, 0x2034, 0x20, 0x28, false, 0);
  model.Finish();
  REQUIRE(sink.Blocks().size() == 1 + 130 * 4);
  REQUIRE(sink.runs.size() == 130);
  for (size_t i = 0; i < 130; ++i) {
    INFO("run " << i);
    CHECK(sink.runs[i].first == 1 + 4 * i);
    CHECK(sink.runs[i].count == (i == 127 ? 3 : 4));  // the 128th's last block: next batch
  }
  // Every run's blocks are the run's.
  for (const RunsSeen::Seen& seen : sink.runs)
    for (size_t b = 0; b < seen.count; ++b)
      CHECK(sink.Blocks()[seen.first + b].first_ip == run[b].first_ip);
}
