#include "src/report/branch_sample_writer.h"

#include <catch2/catch.hpp>

#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "src/model/parted_testing.h"

using namespace ptprof;
using namespace ptprof::testing;

namespace {

TraceEvent Block(int32_t tid, uint64_t first, uint64_t last, BlockEnd end, uint64_t offset = 0) {
  TraceEvent e;
  e.header.tid = tid;
  e.header.pid = tid == 7 ? 70 : -1;
  e.header.cpu = tid < 0 ? 2 : -1;
  e.header.offset = offset;
  ExecBlock b;
  b.first_ip = first;
  b.last_ip = last;
  b.insns = 1 + static_cast<uint32_t>((last - first) / 4);
  b.last_insn_size = 2;
  b.end = end;
  e.body = b;
  return e;
}

TraceEvent Gap(int32_t tid) {
  TraceEvent e;
  e.header.tid = tid;
  e.body = TraceGap{};
  return e;
}

// What `write` makes the writer write into memory.
template <class Write>
std::string Written(BranchSampleWriter::Options options, Write&& write) {
  char* data = nullptr;
  size_t size = 0;
  std::FILE* out = open_memstream(&data, &size);
  {
    BranchSampleWriter writer(out, options);
    write(writer);
  }
  std::fclose(out);
  std::string text(data, size);
  std::free(data);
  return text;
}

// A flow of three threads (one known only by its cpu) with every kind of block end, gaps,
// toggles, mode changes, and blocks with and without a time.
std::vector<TraceEvent> RandomBranchFlow(uint32_t seed, size_t size) {
  std::mt19937 random(seed);
  auto pick = [&](uint32_t n) { return std::uniform_int_distribution<uint32_t>(0, n - 1)(random); };
  const int32_t tids[] = {7, 8, -1};
  std::vector<TraceEvent> events;
  uint64_t offset = 0, now = 1000;
  int32_t tid = 7;
  while (events.size() < size) {
    if (pick(8) == 0) tid = tids[pick(3)];
    offset += pick(3);
    const uint32_t roll = pick(100);
    TraceEvent e;
    if (roll < 2) {
      e = Gap(tid);
    } else if (roll < 4) {
      e = Gap(tid);
      e.body = TraceToggle{pick(2) ? TraceToggle::Kind::kDisabled : TraceToggle::Kind::kEnabled, 0, false};
    } else if (roll < 6) {
      e = Gap(tid);
      e.body = ModeChange{};
    } else {
      const uint64_t first = 0x1000 + 2 * pick(0x800);
      e = Block(tid, first, first + 4 * pick(6), static_cast<BlockEnd>(pick(13)), offset);
      if (pick(4)) e.header.time_ns = (now += 3);
    }
    e.header.offset = offset;
    events.push_back(std::move(e));
  }
  return events;
}

}  // namespace

TEST_CASE("a flow's taken branches are written in samples of a thread, ended when full or broken") {
  const std::vector<TraceEvent> events = {
      Block(7, 0x10, 0x18, BlockEnd::kCondTaken, 0x100),
      Block(8, 0x90, 0x98, BlockEnd::kCall, 0x101),     // another thread in between
      Block(7, 0x40, 0x44, BlockEnd::kFallThrough, 0x102),  // a split: no branch
      Block(7, 0x46, 0x4a, BlockEnd::kCondNotTaken, 0x103),
      Block(7, 0x4c, 0x50, BlockEnd::kReturn, 0x104),
      Block(8, 0x200, 0x204, BlockEnd::kJump, 0x105),
      Block(7, 0x20, 0x24, BlockEnd::kSyscall, 0x106),  // breaks 7's run: its sample is written
      Block(7, 0x30, 0x34, BlockEnd::kJump, 0x107),
      Gap(7),                                           // the pending branch is dropped
      Block(7, 0x60, 0x64, BlockEnd::kTraceStop, 0x108),
      Block(8, 0x300, 0x304, BlockEnd::kJump, 0x109),
      Block(-1, 0x500, 0x504, BlockEnd::kCall, 0x10a),  // a thread known by its cpu
      Block(-1, 0x600, 0x604, BlockEnd::kJump, 0x10b),
  };
  auto feed = [&](BranchSampleWriter& w) {
    for (const TraceEvent& e : events) w.OnEvent(e);
    w.OnEnd();
  };
  const std::string text = Written({false, 16, nullptr}, feed);
  CHECK(text ==
        "sample 0: pid 70 tid 7 offset 0x100, 2 records\n"
        "  0x18 -> 0x40\n"
        "  0x50 -> 0x20\n"
        "sample 1: pid 0 tid 0 cpu 2 offset 0x10a, 1 records\n"  // at the end, by thread
        "  0x504 -> 0x600\n"
        "sample 2: pid 0 tid 8 offset 0x101, 2 records\n"
        "  0x98 -> 0x200\n"
        "  0x204 -> 0x300\n");
  // One record a sample; symbols where either end has one.
  const std::string named = Written(
      {false, 1, [](uint64_t ip) { return ip == 0x40 ? std::string("f+0x0") : std::string(); }}, feed);
  CHECK(named.find("sample 0: pid 70 tid 7 offset 0x100, 1 records\n  0x18 -> 0x40  ? -> f+0x0\n"
                   "sample 1: pid 0 tid 8 offset 0x101, 1 records\n  0x98 -> 0x200\n") == 0);
  const std::string jsonl = Written({true, 1, nullptr}, feed);
  CHECK(jsonl.find("{\"from\":\"0x18\",\"to\":\"0x40\",\"sample\":0}\n"
                   "{\"from\":\"0x98\",\"to\":\"0x200\",\"sample\":1}\n") == 0);
  BranchSampleWriter counted(std::fopen("/dev/null", "w"), {false, 0, nullptr});
  for (const TraceEvent& e : events) counted.OnEvent(e);
  counted.OnEnd();
  CHECK(counted.records() == 5);
  CHECK(counted.samples() == 3);
}

TEST_CASE("cut into parts, the samples written are those of the whole stream, byte for byte") {
  for (uint32_t seed = 1; seed <= 6; ++seed) {
    const std::vector<TraceEvent> events = RandomBranchFlow(seed, 3000);
    for (const bool jsonl : {false, true}) {
      for (const uint32_t depth : {0u, 1u, 3u, 16u}) {
        const BranchSampleWriter::Options options{
            jsonl, depth, [](uint64_t ip) { return ip % 5 ? std::string() : "f+" + std::to_string(ip); }};
        const std::string whole = Written(options, [&](BranchSampleWriter& w) {
          FeedEvents(w, events, 0, events.size(), false);
          w.OnEnd();
        });
        REQUIRE(whole.size() > 1000);
        std::vector<std::vector<size_t>> cuts = SomeRandomCuts(events.size(), seed * 31 + depth);
        std::vector<size_t> every(events.size() + 1);
        for (size_t i = 0; i <= events.size(); ++i) every[i] = i;
        cuts.push_back(every);
        for (const auto& cut : cuts) {
          for (const bool batched : {false, true}) {
            INFO("seed " << seed << " jsonl " << jsonl << " depth " << depth << " parts "
                         << cut.size() - 1 << " batched " << batched);
            const std::string parted = Written(options, [&](BranchSampleWriter& w) {
              const PartsFolded folded = FeedInParts(w, events, cut, batched);
              CHECK(folded.refused == 0);
              w.OnEnd();
            });
            CHECK(parted == whole);
          }
        }
      }
    }
  }
}

TEST_CASE("a stream taken directly between folded parts writes what the whole stream does") {
  const std::vector<TraceEvent> events = RandomBranchFlow(11, 2000);
  const BranchSampleWriter::Options options{false, 5, nullptr};
  const std::string whole = Written(options, [&](BranchSampleWriter& w) {
    FeedEvents(w, events, 0, events.size(), true);
    w.OnEnd();
  });
  const std::string mixed = Written(options, [&](BranchSampleWriter& w) {
    for (size_t from = 0; from < events.size(); from += 100) {
      const size_t to = std::min(events.size(), from + 100);
      if (from / 100 % 3 == 1) {  // every third stretch directly, as a refused part would be
        FeedEvents(w, events, from, to, true);
        continue;
      }
      std::unique_ptr<EventSink> part = w.NewPart();
      FeedEvents(*part, events, from, to, from / 100 % 2);
      part->OnEnd();
      w.Fold(std::move(part));
    }
    w.OnEnd();
  });
  CHECK(mixed == whole);
}
