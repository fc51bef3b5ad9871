#include "decoders/pt/fast/fast_flow.h"

#include <algorithm>
#include <functional>

#include <catch2/catch.hpp>

#include "src/model/event_equality.h"
#include "decoders/pt/flow_session.h"
#include "decoders/pt/flow_testing.h"

using namespace ptprof;
using namespace ptprof::pt;
using namespace ptprof::pt::testing;

namespace {

using Collect = CollectingSink;

struct Decoded {
  Collect events;
  FlowSummary summary;
};

Decoded Decode(const std::vector<uint8_t>& trace, const ImageSet& images, FlowEngine engine,
               unsigned jobs = 1, uint64_t segment = 0) {
  FlowRequest request;
  request.engine = engine;
  request.jobs = jobs;
  request.segment_bytes = segment;
  Decoded out;
  auto summary = DecodeFlow(trace, images, request, out.events);
  REQUIRE(summary);
  out.summary = *summary;
  return out;
}

void RequireSame(const Decoded& a, const Decoded& b) {
  REQUIRE(a.events.events.size() == b.events.events.size());
  for (size_t i = 0; i < a.events.events.size(); ++i) {
    INFO("event " << i);
    CHECK(SameEvent(a.events.events[i], b.events.events[i]));
  }
  CHECK(a.summary.blocks == b.summary.blocks);
  CHECK(a.summary.insns == b.summary.insns);
  CHECK(a.summary.gaps == b.summary.gaps);
}

// A loop whose TNT runs reach a steady state (fast_flow_steady.cc), with calls two deep:
//   1000 xor eax,eax; 1002 je 1006; 1004 nop; 1005 nop; 1006 call 1010; 100b jne 1000;
//   100d jmp 1000; 1010 nop; 1011 je 1014; 1013 nop; 1014 call 1020; 1019 ret; 1020 nop; 1021 ret
// With `indirect`, the second call is `call rax` and the callee starts with `jmp rcx`, whose
// targets TIPs give: 1014 call rax; 1016 ret; 1020 jmp rcx; 1024 jmp 1026; 1026 nop; 1027 ret.
std::vector<uint8_t> LoopProgram(bool indirect) {
  std::vector<uint8_t> code = {0x31, 0xc0, 0x74, 0x02, 0x90, 0x90, 0xe8, 0x05, 0x00, 0x00, 0x00,
                               0x75, 0xf3, 0xeb, 0xf1, 0x90, 0x90, 0x74, 0x01, 0x90};
  if (indirect) {
    code.insert(code.end(), {0xff, 0xd0, 0xc3});
  } else {
    code.insert(code.end(), {0xe8, 0x07, 0x00, 0x00, 0x00, 0xc3});
  }
  code.resize(0x20, 0x90);
  if (indirect) code.insert(code.end(), {0xff, 0xe1, 0x90, 0x90, 0xeb, 0x00});
  code.insert(code.end(), {0x90, 0xc3});
  return code;
}

struct LoopShape {
  unsigned turns = 0;
  unsigned period = 0;  // the first `period` turns drawn at random and repeated (0: all random)
  bool mixed = false;   // TNT-8 packets of 1 to 6 bits (else of 6, as far as they can be)
  unsigned timing = 0;  // a TSC packet after every `timing`-th packet (0: none)
  bool indirect = false;
  bool tip_returns = false;  // in one turn in four, both returns not compressed (TIPs)
};

// Its trace: the turns of the loop, five bits each (the je, the callee's je, the two compressed
// returns, the jne back) and, with `indirect`, TIPs to 1020 and 1024 after the first two. With
// `tip_returns`, some turns' returns come as TIPs to their return addresses instead of bits (the
// return stack keeps those addresses, as libipt's does). Tracing stops at the branch after the
// last bit.
std::vector<uint8_t> LoopTrace(const LoopShape& shape, uint32_t seed) {
  uint32_t random = seed;
  auto next = [&random] {
    random = random * 1103515245u + 12345u;
    return random >> 16;
  };
  constexpr int kTip = 2, kTip2 = 3, kTipReturn = 4, kTipReturn2 = 5;
  std::vector<int> turn_items;  // the pattern: bits, and kTip where a TIP comes
  std::vector<int> items;
  for (unsigned turn = 0; turn < shape.turns; ++turn) {
    if (shape.period && turn >= shape.period) {
      const size_t size = turn_items.size() / shape.period;
      const auto from = turn_items.begin() + static_cast<long>(size * (turn % shape.period));
      items.insert(items.end(), from, from + static_cast<long>(size));
      continue;
    }
    std::vector<int> these = {(next() & 1) != 0, (next() & 3) != 0};
    if (shape.indirect) these.insert(these.end(), {kTip, kTip2});
    if (shape.tip_returns && (next() & 3) == 0)
      these.insert(these.end(), {kTipReturn, kTipReturn2});
    else
      these.insert(these.end(), {1, 1});
    these.push_back((next() & 7) != 0);
    items.insert(items.end(), these.begin(), these.end());
    turn_items.insert(turn_items.end(), these.begin(), these.end());
  }
  PacketWriter w;
  w.Psb().Tsc(0x1000).ModeExec(ptem_64bit).PsbEnd().TipPge(kSampleBase);
  unsigned packets = 0;
  std::vector<int> pending;
  auto flush = [&] {
    if (pending.empty()) return;
    uint64_t payload = 0;
    for (int bit : pending) payload = payload << 1 | static_cast<uint64_t>(bit);
    w.Tnt(payload, static_cast<uint8_t>(pending.size()));
    pending.clear();
    if (shape.timing && ++packets % shape.timing == 0) w.Tsc(0x1000 + 0x40 * packets);
  };
  size_t size = shape.mixed ? 1 + next() % 6 : 6;
  for (int item : items) {
    if (item >= kTip) {
      flush();
      const uint64_t inner_return = shape.indirect ? 0x1016 : 0x1019;
      w.Tip(item == kTip ? 0x1020 : item == kTip2 ? 0x1024 : item == kTipReturn ? inner_return
                                                                                : 0x100b);
      continue;
    }
    pending.push_back(item);
    if (pending.size() == size) {
      flush();
      size = shape.mixed ? 1 + next() % 6 : 6;
    }
  }
  flush();
  w.TipPgdSuppressed();
  return w.bytes();
}

}  // namespace

TEST_CASE("Loops in their steady state give libipt's events, offsets and times included",
          "[fast_flow]") {
  for (bool indirect : {false, true}) {
    TempFile code(LoopProgram(indirect));
    ImageSet images;
    REQUIRE(images.AddRaw(RawImageSpec{code.path(), 0, UINT64_MAX, kSampleBase}));
    for (const LoopShape shape :
         {LoopShape{3000, 7, false, 0, indirect}, LoopShape{3000, 13, true, 0, indirect},
          LoopShape{3000, 11, false, 5, indirect}, LoopShape{2000, 0, false, 0, indirect},
          LoopShape{2000, 0, true, 3, indirect}, LoopShape{3000, 9, false, 0, indirect, true},
          LoopShape{2000, 0, true, 4, indirect, true}}) {
      for (uint32_t seed : {1u, 2u, 3u}) {
        INFO("turns " << shape.turns << ", period " << shape.period << ", mixed " << shape.mixed
                      << ", timing " << shape.timing << ", indirect " << indirect
                      << ", TIP returns " << shape.tip_returns << ", seed " << seed);
        const auto trace = LoopTrace(shape, seed);
        const Decoded libipt = Decode(trace, images, FlowEngine::kLibipt);
        const Decoded fast = Decode(trace, images, FlowEngine::kFast);
        RequireSame(libipt, fast);
        CHECK(fast.summary.fast_segments == 1);
        CHECK(libipt.summary.insns > 6 * shape.turns);
      }
    }
  }
}

TEST_CASE("The fast engine gives libipt's events on the sample program", "[fast_flow]") {
  TempFile code(SampleProgram());
  ImageSet images;
  REQUIRE(images.AddRaw(RawImageSpec{code.path(), 0, UINT64_MAX, kSampleBase}));
  const auto trace = SampleTrace();
  const Decoded libipt = Decode(trace, images, FlowEngine::kLibipt);
  const Decoded fast = Decode(trace, images, FlowEngine::kFast);
  RequireSame(libipt, fast);
  INFO(fast.summary.fallback_because);
  CHECK(fast.summary.fast_segments == 1);
  CHECK(fast.summary.libipt_segments == 0);
  CHECK(fast.summary.fallback_because.empty());
  CHECK(fast.summary.insns > 3);
}

TEST_CASE("The fast engine over many segments, with junk between runs", "[fast_flow]") {
  TempFile code(SampleProgram());
  ImageSet images;
  REQUIRE(images.AddRaw(RawImageSpec{code.path(), 0, UINT64_MAX, kSampleBase}));
  std::vector<uint8_t> trace;
  for (int i = 0; i < 30; ++i) {
    auto part = SampleTrace(0x1000 + 0x100 * static_cast<uint64_t>(i));
    trace.insert(trace.end(), part.begin(), part.end());
  }
  const Decoded libipt = Decode(trace, images, FlowEngine::kLibipt);
  for (unsigned jobs : {1u, 2u}) {
    INFO("jobs " << jobs);
    const Decoded fast = Decode(trace, images, FlowEngine::kFast, jobs, 100);
    RequireSame(libipt, fast);
    // One thread decodes in one piece; more cut the trace into PSB segments.
    CHECK(fast.summary.segments == (jobs == 1 ? 1u : fast.summary.segments));
    if (jobs > 1) CHECK(fast.summary.segments > 4);
    CHECK(fast.summary.fast_segments == fast.summary.segments);
    CHECK(fast.summary.libipt_segments == 0);
  }
}

TEST_CASE("What the fast engine does not handle goes to libipt, and the output stays the same",
          "[fast_flow]") {
  TempFile code(SampleProgram());
  ImageSet images;
  REQUIRE(images.AddRaw(RawImageSpec{code.path(), 0, UINT64_MAX, kSampleBase}));
  // A decode error: tracing enabled where no code is mapped.
  PacketWriter bad;
  bad.Psb().Tsc(0x10).ModeExec(ptem_64bit).PsbEnd().TipPge(0x9000).Tnt(1, 1).TipPgdSuppressed();
  const Decoded libipt = Decode(bad.bytes(), images, FlowEngine::kLibipt);
  for (unsigned jobs : {1u, 2u}) {
    INFO("jobs " << jobs);
    const Decoded fast = Decode(bad.bytes(), images, FlowEngine::kFast, jobs);
    RequireSame(libipt, fast);
    CHECK(fast.summary.fast_segments == 0);
    CHECK(fast.summary.libipt_segments == 1);
    CHECK(fast.summary.fallback_because.find("no code mapped at 0x9000") != std::string::npos);
  }
  CHECK(libipt.summary.gaps > 0);
}

TEST_CASE("Handing over to libipt in the middle of a one-piece decode keeps the events before",
          "[fast_flow]") {
  TempFile code(SampleProgram());
  ImageSet images;
  REQUIRE(images.AddRaw(RawImageSpec{code.path(), 0, UINT64_MAX, kSampleBase}));
  // Good runs, then one that enables where no code is mapped, then good runs again.
  std::vector<uint8_t> trace;
  for (int i = 0; i < 6; ++i) {
    if (i == 3) {
      PacketWriter bad;
      bad.Psb()
          .Tsc(0x5000)
          .ModeExec(ptem_64bit)
          .PsbEnd()
          .TipPge(0x9000)
          .Tnt(1, 1)
          .TipPgdSuppressed();
      trace.insert(trace.end(), bad.bytes().begin(), bad.bytes().end());
    }
    auto part = SampleTrace(0x1000 + 0x100 * static_cast<uint64_t>(i));
    trace.insert(trace.end(), part.begin(), part.end());
  }
  const Decoded libipt = Decode(trace, images, FlowEngine::kLibipt);
  const Decoded fast = Decode(trace, images, FlowEngine::kFast);
  RequireSame(libipt, fast);
  CHECK(fast.summary.libipt_segments == 1);
  CHECK(libipt.summary.gaps > 0);
}

namespace {

// Two tasks, each in an address space of its own: the first at a time `second_at` says no to
// (and before the first timing packet), the second where it says yes. With `span_of`, the
// times around a time with the same task are told (TaskAt's `same`); without, only the time.
class TwoTasks : public TaskTimeline {
 public:
  TwoTasks(const ImageSet& first, const ImageSet& second,
           std::function<bool(uint64_t)> second_at = [](uint64_t tsc) { return tsc >= 0x1800; },
           std::function<TscSpan(uint64_t)> span_of = {})
      : spaces_{&first, &second}, second_at_(std::move(second_at)), span_of_(std::move(span_of)) {}
  RunningTask TaskAt(std::optional<uint64_t> tsc, TscSpan* same) override {
    if (same && tsc) *same = span_of_ ? span_of_(*tsc) : TscSpan::At(*tsc);
    if (!tsc || !second_at_(*tsc)) return RunningTask{10, 11, 0};
    return RunningTask{20, 21, 1};
  }
  std::vector<const ImageSection*> SpaceSections(size_t space) const override {
    std::vector<const ImageSection*> sections;
    for (const ImageSection& section : spaces_[space]->sections()) sections.push_back(&section);
    return sections;
  }

 private:
  const ImageSet* spaces_[2];
  std::function<bool(uint64_t)> second_at_;
  std::function<TscSpan(uint64_t)> span_of_;
};

// The two tasks in turn: the first while TSC / `stripe` is even, the second while it is odd;
// with `spans`, each stripe told as the times with the same task.
TwoTasks StripedTasks(const ImageSet& first, const ImageSet& second, uint64_t stripe,
                      bool spans) {
  std::function<TscSpan(uint64_t)> span_of;
  if (spans)
    span_of = [stripe](uint64_t tsc) {
      const uint64_t from = tsc / stripe * stripe;
      return TscSpan{from, from + stripe - 1};
    };
  return TwoTasks(first, second, [stripe](uint64_t tsc) { return (tsc / stripe) % 2 != 0; },
                  std::move(span_of));
}

}  // namespace

TEST_CASE("The fast engine follows tasks from sideband as libipt's decode does", "[fast_flow]") {
  TempFile code(SampleProgram());
  TempFile other(SampleProgram());
  ImageSet first, second;
  REQUIRE(first.AddRaw(RawImageSpec{code.path(), 0, UINT64_MAX, kSampleBase}));
  REQUIRE(second.AddRaw(RawImageSpec{other.path(), 0, UINT64_MAX, kSampleBase}));
  std::vector<uint8_t> trace;
  for (uint64_t tsc : {0x1000, 0x1400, 0x2000, 0x2400}) {
    auto part = SampleTrace(tsc);
    trace.insert(trace.end(), part.begin(), part.end());
  }
  auto decode = [&](FlowEngine engine, bool insns, bool spans = false) {
    TwoTasks tasks(first, second, [](uint64_t tsc) { return tsc >= 0x1800; },
                   [spans](uint64_t tsc) {
                     return !spans        ? TscSpan::At(tsc)
                            : tsc < 0x1800 ? TscSpan{0, 0x17ff}
                                           : TscSpan{0x1800, UINT64_MAX};
                   });
    FlowRequest request;
    request.engine = engine;
    request.insns = insns;
    request.tasks = &tasks;
    request.jobs = 2;  // too short to cut: in one piece
    Decoded out;
    auto summary = DecodeFlow(trace, first, request, out.events);
    REQUIRE(summary);
    out.summary = *summary;
    return out;
  };
  for (const bool insns : {false, true}) {
    INFO((insns ? "instructions" : "blocks"));
    const Decoded libipt = decode(FlowEngine::kLibipt, insns);
    const Decoded fast = decode(FlowEngine::kFast, insns);
    RequireSame(libipt, fast);
    RequireSame(libipt, decode(FlowEngine::kFast, insns, true));
    CHECK(fast.summary.fast_segments == 1);
    CHECK(fast.summary.libipt_segments == 0);
    CHECK(fast.summary.sequential_because == "the trace is smaller than two segments");
    size_t switches = 0, listed = 0;
    for (const TraceEvent& event : fast.events.events) {
      if (std::holds_alternative<ContextSwitch>(event.body)) ++switches;
      if (std::holds_alternative<Instruction>(event.body)) ++listed;
    }
    CHECK(switches == 2);  // to the first task at the start, to the second at TSC 0x2000
    CHECK(fast.events.events.back().header.pid == 20);
    CHECK((listed > 0) == insns);
  }
}


TEST_CASE("Following tasks that change between TNT packets, the fast engine gives libipt's events",
          "[fast_flow]") {
  for (bool indirect : {false, true}) {
    TempFile code(LoopProgram(indirect));
    TempFile same(LoopProgram(indirect));
    ImageSet first, second;
    REQUIRE(first.AddRaw(RawImageSpec{code.path(), 0, UINT64_MAX, kSampleBase}));
    REQUIRE(second.AddRaw(RawImageSpec{same.path(), 0, UINT64_MAX, kSampleBase}));
    // A TSC packet after every few TNT packets (0x40 further for each packet), tasks striped by
    // 0x40 (a switch at every TSC packet of an odd count), 0xc0 (one at most TSC packets) or
    // 0x1000 (a few dozen).
    for (const LoopShape shape :
         {LoopShape{2000, 7, false, 3, indirect}, LoopShape{2000, 0, true, 2, indirect},
          LoopShape{2000, 9, false, 5, indirect, true}}) {
      for (const uint64_t stripe : {0x40u, 0xc0u, 0x1000u}) {
        INFO("indirect " << indirect << ", mixed " << shape.mixed << ", timing " << shape.timing
                         << ", stripe " << stripe);
        const auto trace = LoopTrace(shape, 7);
        auto decode = [&](FlowEngine engine, bool spans = false) {
          TwoTasks tasks = StripedTasks(first, second, stripe, spans);
          FlowRequest request;
          request.engine = engine;
          request.tasks = &tasks;
          Decoded out;
          auto summary = DecodeFlow(trace, first, request, out.events);
          REQUIRE(summary);
          out.summary = *summary;
          return out;
        };
        const Decoded libipt = decode(FlowEngine::kLibipt);
        const Decoded fast = decode(FlowEngine::kFast);
        RequireSame(libipt, fast);
        RequireSame(libipt, decode(FlowEngine::kFast, true));
        CHECK(fast.summary.fast_segments == 1);
        size_t switches = 0;
        for (const TraceEvent& event : fast.events.events)
          switches += std::holds_alternative<ContextSwitch>(event.body);
        CHECK((switches > 2 || (stripe == 0x40 && shape.timing % 2 == 0)));
      }
    }
  }
}

TEST_CASE("Following tasks, PSB segments decoded in parallel give libipt's events", "[fast_flow]") {
  TempFile code(LoopProgram(false));
  TempFile same(LoopProgram(false));
  ImageSet first, second;
  REQUIRE(first.AddRaw(RawImageSpec{code.path(), 0, UINT64_MAX, kSampleBase}));
  REQUIRE(second.AddRaw(RawImageSpec{same.path(), 0, UINT64_MAX, kSampleBase}));
  // Six loops, each from a PSB of its own, their TSC packets in the same range of times.
  std::vector<uint8_t> trace;
  for (uint32_t seed = 1; seed <= 6; ++seed) {
    const auto part = LoopTrace(LoopShape{600, 0, true, 3, false}, seed);
    trace.insert(trace.end(), part.begin(), part.end());
  }
  for (const uint64_t stripe : {0xc0u, 0x1000u}) {
    INFO("stripe " << stripe);
    auto decode = [&](FlowEngine engine, unsigned jobs, bool spans = false) {
      TwoTasks tasks = StripedTasks(first, second, stripe, spans);
      FlowRequest request;
      request.engine = engine;
      request.tasks = &tasks;
      request.jobs = jobs;
      request.segment_bytes = 256;
      Decoded out;
      auto summary = DecodeFlow(trace, first, request, out.events);
      REQUIRE(summary);
      out.summary = *summary;
      return out;
    };
    const Decoded libipt = decode(FlowEngine::kLibipt, 1);
    const Decoded fast = decode(FlowEngine::kFast, 2);
    RequireSame(libipt, fast);
    RequireSame(libipt, decode(FlowEngine::kFast, 2, true));
    const Decoded libipt_parallel = decode(FlowEngine::kLibipt, 2);
    RequireSame(libipt, libipt_parallel);
    CHECK(libipt_parallel.summary.segments > 3);
    CHECK(fast.summary.segments > 3);
    CHECK(fast.summary.sequential_because.empty());
    CHECK(fast.summary.fast_segments == fast.summary.segments);
  }
}

TEST_CASE("The fast engine takes instruction decodes, with or without tasks, but not ticks",
          "[fast_flow]") {
  FlowRequest request;
  request.insns = true;
  std::string why;
  CHECK(FastEngineApplies(request, &why));
  struct NoTasks : TaskTimeline {
    RunningTask TaskAt(std::optional<uint64_t>, TscSpan*) override { return {}; }
    std::vector<const ImageSection*> SpaceSections(size_t) const override { return {}; }
  } tasks;
  request.tasks = &tasks;
  CHECK(FastEngineApplies(request, &why));
  request.tasks = nullptr;
  request.ticks = true;
  CHECK_FALSE(FastEngineApplies(request, &why));
  CHECK(why == "tick events are asked for");
  CHECK(FastEngineApplies(FlowRequest{}));
}
