#include "src/analyses/delta/delta_profiler.h"

#include <catch2/catch.hpp>

#include "sideband/image_testing.h"
#include "src/analyses/patterns/pattern_parser.h"

using namespace ptprof;
using namespace ptprof::delta;

namespace {

// 0x1000 pause ; 0x1002 nop ; 0x1003 nop ; 0x1004 lfence ; 0x1007 nop ; 0x1008 cli ; 0x1009 sti
const std::vector<uint8_t> kCode = {0xf3, 0x90, 0x90, 0x90, 0x0f, 0xae, 0xe8, 0x90, 0xfa, 0xfb};

patterns::Pattern P(const std::string& name, const std::string& text) {
  auto p = patterns::ParsePattern(name, text);
  REQUIRE(p);
  return *p;
}

TraceEvent Block(uint64_t ip, uint32_t insns, uint64_t tsc, int32_t cpu = 0, uint64_t offset = 0) {
  ExecBlock b;
  b.first_ip = ip;
  b.insns = insns;
  b.mode = ExecMode::k64Bit;
  TraceEvent e{EventHeader{}, b};
  e.header.tsc = tsc;
  e.header.cpu = cpu;
  e.header.offset = offset;
  return e;
}

TraceEvent Gap(int32_t cpu = 0) {
  TraceEvent e{EventHeader{}, TraceGap{}};
  e.header.cpu = cpu;
  return e;
}

std::unique_ptr<DeltaProfiler> Profiler(const ImageSet& images, const std::string& open,
                                        const std::string& close,
                                        IntervalKeeping keeping = IntervalKeeping{}) {
  DeltaOptions options;
  options.clock = EventClock::Ticks(0.5);
  options.keeping = keeping;
  auto p = DeltaProfiler::Create(images, P("open", open), P("close", close), options);
  REQUIRE(p);
  return std::move(*p);
}

}  // namespace

TEST_CASE("an interval runs from the opener's instruction to the closer's") {
  ImageSet images = testing::ImageWith(kCode, 0x1000);
  auto p = Profiler(images, "pause", "lfence");
  p->OnEvent(Block(0x1002, 3, 10));         // nop nop lfence: a closer without an opener
  p->OnEvent(Block(0x1000, 4, 20, 0, 0x40));  // pause nop nop lfence
  p->OnEvent(Block(0x1007, 3, 30));
  p->OnEvent(Block(0x1000, 2, 40, 0, 0x80));  // pause nop
  p->OnEvent(Block(0x1003, 2, 52, 0, 0x90));  // nop lfence
  p->OnEnd();
  const auto& c = p->counts();
  CHECK(c.intervals == 2);
  CHECK(c.closers_without_opener == 1);
  CHECK(c.instructions == 14);
  REQUIRE(p->intervals().size() == 2);
  const Interval& a = p->intervals()[0];
  CHECK(a.instructions() == 3);
  CHECK(a.open_position == 3);
  CHECK(a.open_ip == 0x1000);
  CHECK(a.close_ip == 0x1004);
  CHECK(a.open_offset == 0x40);
  CHECK(a.time() == 0.0);  // both in one block: one time
  const Interval& b = p->intervals()[1];
  CHECK(b.instructions() == 3);
  CHECK(b.open_offset == 0x80);
  CHECK(b.close_offset == 0x90);
  CHECK(b.time() == 6.0);
  CHECK(c.matches[0] == std::vector<uint64_t>{2});
  CHECK(c.matches[1] == std::vector<uint64_t>{3});
}

TEST_CASE("a repeated opener is nested; a gap drops the open interval") {
  ImageSet images = testing::ImageWith(kCode, 0x1000);
  auto p = Profiler(images, "pause", "lfence");
  p->OnEvent(Block(0x1000, 3, 1));  // pause nop nop
  p->OnEvent(Block(0x1000, 4, 2));  // pause (nested) nop nop lfence
  p->OnEvent(Block(0x1000, 1, 3));  // pause
  p->OnEvent(Gap());
  p->OnEvent(Block(0x1004, 1, 4));  // lfence, no longer open
  p->OnEnd();
  const auto& c = p->counts();
  CHECK(c.intervals == 1);
  CHECK(c.nested_openers == 1);
  CHECK(p->intervals()[0].nested == 1);
  CHECK(p->intervals()[0].instructions() == 6);
  CHECK(c.dropped_at_gap == 1);
  CHECK(c.gaps == 1);
  CHECK(c.closers_without_opener == 1);
}

TEST_CASE("lanes: each CPU has its own intervals; per thread on request") {
  ImageSet images = testing::ImageWith(kCode, 0x1000);
  auto p = Profiler(images, "pause", "lfence");
  p->OnEvent(Block(0x1000, 1, 1, 0));  // cpu 0 opens
  p->OnEvent(Block(0x1004, 1, 2, 1));  // cpu 1: a closer without an opener
  p->OnEnd();
  CHECK(p->counts().intervals == 0);
  CHECK(p->counts().closers_without_opener == 1);
  CHECK(p->counts().open_at_end == 1);
}

TEST_CASE("the same pattern twice alternates opening and closing (Algorithm 1)") {
  ImageSet images = testing::ImageWith(kCode, 0x1000);
  auto p = Profiler(images, "pause", "pause");
  for (int i = 0; i < 3; ++i) p->OnEvent(Block(0x1000, 2, 10 * static_cast<uint64_t>(i)));
  p->OnEnd();
  CHECK(p->counts().intervals == 1);
  CHECK(p->intervals()[0].instructions() == 2);
  CHECK(p->counts().open_at_end == 1);
  CHECK(p->counts().nested_openers == 0);
}

TEST_CASE("sequences match across blocks; blocks without code are counted, not matched") {
  ImageSet images = testing::ImageWith(kCode, 0x1000);
  auto p = Profiler(images, "nop ; lfence", "cli ;{1} sti");
  p->OnEvent(Block(0x1003, 1, 1));  // nop
  p->OnEvent(Block(0x1004, 1, 1));  // lfence: the opener ends here
  p->OnEvent(Block(0x1007, 3, 5));  // nop cli sti: the closer ends at sti
  p->OnEvent(Block(0x5000, 7, 6));  // no code
  p->OnEnd();
  CHECK(p->counts().intervals == 1);
  CHECK(p->intervals()[0].instructions() == 3);
  CHECK(p->intervals()[0].close_ip == 0x1009);
  CHECK(p->counts().unexpanded_instructions == 7);
}

TEST_CASE("blocks in batches profile as the same blocks one by one") {
  // 0x2000 pushf ; 0x2001 pop rax ; 0x2002 cli ; 0x2003 nop ; 0x2004 push rax ; 0x2005 popf ;
  // 0x2006 nop ; 0x2007 push rbx ; 0x2008 nop ; 0x2009 pop rbx ; 0x200a nop ; 0x200b sti
  const std::vector<uint8_t> code = {0x9c, 0x58, 0xfa, 0x90, 0x50, 0x9d,
                                     0x90, 0x53, 0x90, 0x5b, 0x90, 0xfb};
  ImageSet images = testing::ImageWith(code, 0x2000);
  // Blocks that cut the sequences anywhere, over and over, with a gap now and then.
  std::vector<TraceEvent> events;
  uint64_t tsc = 100;
  for (int round = 0; round < 40; ++round) {
    for (uint64_t ip = 0x2000; ip < 0x200c;) {
      const uint32_t insns = static_cast<uint32_t>(1 + (round + ip) % 4);
      const uint32_t left = static_cast<uint32_t>(0x200c - ip);
      const uint32_t n = std::min(insns, left);
      events.push_back(Block(ip, n, tsc, 0, tsc));
      tsc += round % 3;
      ip += n;
    }
    if (round % 9 == 4) events.push_back(Gap());
  }
  // Sequences that a block may leave in progress, and single instructions only (every block
  // then leaves the matcher as idle as it found it, and its matches are worked out once).
  using Pair = std::pair<std::string, std::string>;
  const auto [kCli, kSti] =
      GENERATE(Pair{"pushf* ; pop r64 ;{8} cli | cli", "push r64 ; popf* | sti"},
               Pair{"nop", "pop r64 | sti"});
  INFO(kCli << " , " << kSti);
  auto one = Profiler(images, kCli, kSti);
  for (const TraceEvent& event : events) one->OnEvent(event);
  one->OnEnd();
  auto batched = Profiler(images, kCli, kSti);
  std::vector<PackedEvent> packed;
  auto flush = [&] {
    BlockBatch batch;
    batch.blocks = packed;
    batch.cpu = 0;
    batched->OnBlocks(batch);
    packed.clear();
  };
  for (const TraceEvent& event : events) {
    if (!std::holds_alternative<ExecBlock>(event.body)) {
      flush();
      batched->OnEvent(event);
      continue;
    }
    packed.emplace_back();
    PackBlock(event, packed.back());
    if (packed.size() == 7) flush();
  }
  flush();
  batched->OnEnd();
  const DeltaCounts& a = one->counts();
  const DeltaCounts& b = batched->counts();
  CHECK(a.intervals > 10);
  CHECK(b.intervals == a.intervals);
  CHECK(b.nested_openers == a.nested_openers);
  CHECK(b.dropped_at_gap == a.dropped_at_gap);
  CHECK(b.closers_without_opener == a.closers_without_opener);
  CHECK(b.instructions == a.instructions);
  CHECK(b.matches[0] == a.matches[0]);
  CHECK(b.matches[1] == a.matches[1]);
  REQUIRE(batched->intervals().size() == one->intervals().size());
  for (size_t i = 0; i < one->intervals().size(); ++i) {
    const Interval& x = one->intervals()[i];
    const Interval& y = batched->intervals()[i];
    CHECK(y.open_position == x.open_position);
    CHECK(y.close_position == x.close_position);
    CHECK(y.open_offset == x.open_offset);
    CHECK(y.close_offset == x.close_offset);
    CHECK(y.time() == x.time());
  }
}

TEST_CASE("a profile that keeps only the longest intervals has the same values and longest") {
  ImageSet images = testing::ImageWith(kCode, 0x1000);
  // Intervals pause .. lfence of 3, 5, 3, 5 and 3 instructions (nops between) and 2, 6, 2, 6, 2
  // ticks (tsc x 0.5); the last one's close has no time when `timeless_last`.
  auto feed = [](DeltaProfiler& p, bool timeless_last) {
    uint64_t tsc = 100;
    for (int k = 0; k < 5; ++k) {
      const bool longer = k % 2 == 1;
      p.OnEvent(Block(0x1000, 2, tsc));  // pause nop
      if (longer) p.OnEvent(Block(0x1007, 1, tsc + 4));  // nop (a jump back to 0x1002 in the flow)
      if (longer) p.OnEvent(Block(0x1002, 1, tsc + 6));
      p.OnEvent(Block(0x1003, 2, timeless_last && k == 4 ? kUnknownTime : tsc + (longer ? 12 : 4)));
      tsc += 100;
    }
    p.OnEnd();
  };
  for (bool timeless_last : {false, true}) {
    INFO((timeless_last ? "the last without time" : "all timed"));
    DeltaOptions options;
    options.clock = EventClock::Ticks(0.5);
    auto all = DeltaProfiler::Create(images, P("open", "pause"), P("close", "lfence"), options);
    options.keeping = {false, 3};
    auto some = DeltaProfiler::Create(images, P("open", "pause"), P("close", "lfence"), options);
    REQUIRE(all);
    REQUIRE(some);
    feed(**all, timeless_last);
    feed(**some, timeless_last);
    REQUIRE((*all)->intervals().size() == 5);
    CHECK((*some)->intervals().empty());
    CHECK_FALSE((*some)->keeps_intervals());
    CHECK((*some)->instruction_values() == (*all)->instruction_values());
    CHECK((*some)->time_values() == (*all)->time_values());
    CHECK((*all)->instruction_values() == DeltaValues{3, 5, 3, 5, 3});
    CHECK((*all)->time_values().count() == (timeless_last ? 4u : 5u));
    std::vector<uint64_t> ids, all_ids;
    for (const Interval& i : (*some)->Longest()) ids.push_back(i.id);
    for (const Interval& i : (*all)->Longest()) all_ids.push_back(i.id);
    CHECK(ids == std::vector<uint64_t>{2, 4, 1});
    CHECK(all_ids == std::vector<uint64_t>{2, 4, 1, 3, 5});
  }
}

namespace {

void RequireSameProfile(const DeltaProfiler& one, const DeltaProfiler& other) {
  const DeltaCounts& a = one.counts();
  const DeltaCounts& b = other.counts();
  CHECK(b.intervals == a.intervals);
  CHECK(b.nested_openers == a.nested_openers);
  CHECK(b.dropped_at_gap == a.dropped_at_gap);
  CHECK(b.open_at_end == a.open_at_end);
  CHECK(b.closers_without_opener == a.closers_without_opener);
  CHECK(b.instructions == a.instructions);
  CHECK(b.unexpanded_instructions == a.unexpanded_instructions);
  CHECK(b.gaps == a.gaps);
  CHECK(b.matches[0] == a.matches[0]);
  CHECK(b.matches[1] == a.matches[1]);
  REQUIRE(other.intervals().size() == one.intervals().size());
  for (size_t i = 0; i < one.intervals().size(); ++i) {
    INFO("interval " << i);
    const Interval& x = one.intervals()[i];
    const Interval& y = other.intervals()[i];
    CHECK(y.id == x.id);
    CHECK(y.lane == x.lane);
    CHECK(y.open_ip == x.open_ip);
    CHECK(y.close_ip == x.close_ip);
    CHECK(y.open_position == x.open_position);
    CHECK(y.close_position == x.close_position);
    CHECK(y.open_offset == x.open_offset);
    CHECK(y.close_offset == x.close_offset);
    CHECK(y.open_alternative == x.open_alternative);
    CHECK(y.close_alternative == x.close_alternative);
    CHECK(y.nested == x.nested);
    CHECK(y.time() == x.time());
  }
  const std::vector<Interval> longest = one.Longest();
  const std::vector<Interval> other_longest = other.Longest();
  REQUIRE(other_longest.size() == longest.size());
  for (size_t i = 0; i < longest.size(); ++i) {
    INFO("longest " << i);
    CHECK(other_longest[i].id == longest[i].id);
    CHECK(other_longest[i].lane == longest[i].lane);
    CHECK(other_longest[i].open_position == longest[i].open_position);
    CHECK(other_longest[i].close_position == longest[i].close_position);
    CHECK(other_longest[i].close_offset == longest[i].close_offset);
    CHECK(other_longest[i].time() == longest[i].time());
  }
  CHECK(other.instruction_values() == one.instruction_values());
  CHECK(other.time_values() == one.time_values());
  CHECK(other.time_values().sum() == one.time_values().sum());  // the mean's, to the bit
}

}  // namespace

TEST_CASE("a profile taken in parts is the profile of the whole stream") {
  // The code of the batches test with a second cli (a nested opener), then a sequence that lasts
  // its whole horizon (pushf ; pop rax, eight nops, cli), with a block without code and two CPUs
  // taking turns.
  std::vector<uint8_t> code = {0x9c, 0x58, 0xfa, 0xfa, 0x50, 0x9d,
                               0x90, 0x53, 0x90, 0x5b, 0x90, 0xfb, 0x9c, 0x58};
  code.insert(code.end(), 8, 0x90);
  code.push_back(0xfa);
  code.push_back(0xfb);
  const uint64_t end = 0x2000 + code.size();
  ImageSet images = testing::ImageWith(code, 0x2000);
  std::vector<TraceEvent> events;
  uint64_t tsc = 100;
  for (int round = 0; round < 200; ++round) {
    const int32_t cpu = round % 7 < 5 ? 0 : 1;
    for (uint64_t ip = 0x2000; ip < end;) {
      // Some rounds one instruction a block, so that a part may begin at any of them.
      const uint32_t most = round % 5 == 2 ? 1 : static_cast<uint32_t>(1 + (round + ip) % 4);
      const uint32_t n = std::min(most, static_cast<uint32_t>(end - ip));
      events.push_back(Block(ip, n, tsc, cpu, tsc));
      tsc += round % 3;
      ip += n;
    }
    if (round % 13 == 6) events.push_back(Gap(cpu));
    if (round % 17 == 8) events.push_back(Block(0x5000, 3, tsc, cpu, tsc));  // no code
  }
  // As in the batches test: sequences, and single instructions only.
  using Pair = std::pair<std::string, std::string>;
  const auto [kCli, kSti] =
      GENERATE(Pair{"pushf* ; pop r64 ;{8} cli | cli", "push r64 ; popf* | sti"},
               Pair{"nop", "pop r64 | sti"});
  // Every interval kept, or only the longest (whose numbers Fold then works out alone).
  const IntervalKeeping keeping = GENERATE(IntervalKeeping{true, 10}, IntervalKeeping{false, 6});
  INFO(kCli << " , " << kSti << (keeping.all ? ", every interval kept" : ", the longest kept"));
  auto whole = Profiler(images, kCli, kSti, keeping);
  for (const TraceEvent& event : events) whole->OnEvent(event);
  whole->OnEnd();
  REQUIRE(whole->counts().intervals > 20);
  REQUIRE(whole->counts().nested_openers > 20);

  // Cut anywhere: pieces of 1 to `longest` events, every other one taken directly and the rest
  // in parts (blocks batched), as a parted decode gives them; and one part from each event on.
  std::vector<std::pair<size_t, size_t>> cuts;  // (longest piece, first event of the one part)
  for (size_t longest : {size_t{2}, size_t{3}, size_t{5}, size_t{17}, size_t{40}, size_t{400}})
    cuts.emplace_back(longest, 0);
  for (size_t first = 1; first < 400; ++first) cuts.emplace_back(0, first);
  for (const auto& [longest, first] : cuts) {
    INFO("pieces of up to " << longest << " events, or one part from event " << first);
    auto parted = Profiler(images, kCli, kSti, keeping);
    size_t at = 0;
    for (size_t piece = 0; at < events.size(); ++piece) {
      const size_t end = longest ? std::min(events.size(), at + 1 + (piece * 7919) % longest)
                                 : piece == 0 ? first : events.size();
      if (piece % 2 == 0) {
        for (; at < end; ++at) parted->OnEvent(events[at]);
        continue;
      }
      std::unique_ptr<EventSink> part = parted->NewPart();
      std::vector<PackedEvent> packed;
      auto flush = [&] {
        BlockBatch batch;
        batch.blocks = packed;
        batch.cpu = packed.empty() ? 0 : events[at - 1].header.cpu;
        if (!packed.empty()) part->OnBlocks(batch);
        packed.clear();
      };
      for (; at < end; ++at) {
        const TraceEvent& event = events[at];
        const bool block = std::holds_alternative<ExecBlock>(event.body);
        if (!packed.empty() && (!block || event.header.cpu != events[at - 1].header.cpu)) flush();
        if (!block) {
          part->OnEvent(event);
          continue;
        }
        packed.emplace_back();
        PackBlock(event, packed.back());
      }
      flush();
      part->OnEnd();
      parted->Fold(std::move(part));
    }
    parted->OnEnd();
    RequireSameProfile(*whole, *parted);
  }
}
