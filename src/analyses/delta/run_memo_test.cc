#include "src/analyses/delta/run_memo.h"

#include <vector>

#include <catch2/catch.hpp>

namespace ptprof::delta {
namespace {

std::vector<PackedEvent> Blocks(std::initializer_list<uint32_t> insns) {
  std::vector<PackedEvent> blocks;
  uint64_t ip = 0x1000;
  for (uint32_t n : insns) {
    PackedEvent p;
    p.first_ip_or_index = ip;
    p.insns = n;
    blocks.push_back(p);
    ip += 0x100;
  }
  return blocks;
}

TEST_CASE("a run is worked out once, by its source, memory and length") {
  const std::vector<PackedEvent> blocks = Blocks({3, 4, 5});
  int calls = 0;
  // A match at the second instruction of every block at 0x1100.
  auto matches = [&](const PackedEvent& p, uint64_t before, std::vector<RunMatch>& out) {
    ++calls;
    if (p.first_ip_or_index == 0x1100) out.push_back({0, static_cast<uint32_t>(before + 1), 0x1101, ExecMode::k64Bit, {0, -1}});
    return true;
  };
  RunMemo memo;
  const int key = 0;
  const BatchRun run{blocks.data(), &key, 3};
  RunMemo::Outcome first = memo.Find(7, run, matches);
  CHECK(first.settled);
  CHECK(first.insns == 12);
  REQUIRE(first.matches.size() == 1);
  CHECK(first.matches[0].block == 1);
  CHECK(first.matches[0].position == 4);
  CHECK(calls == 3);
  // Again, from another copy of the blocks: not worked out again.
  const std::vector<PackedEvent> copy = blocks;
  RunMemo::Outcome again = memo.Find(7, BatchRun{copy.data(), &key, 3}, matches);
  CHECK(calls == 3);
  CHECK(again.insns == 12);
  CHECK(again.matches.size() == 1);
  // Another length, or another source: another run.
  CHECK(memo.Find(7, BatchRun{blocks.data(), &key, 2}, matches).insns == 7);
  CHECK(memo.Find(8, run, matches).insns == 12);
  CHECK(calls == 3 + 2 + 3);
  CHECK(memo.runs() == 3);
}

TEST_CASE("a run with a block to step through is not settled") {
  const std::vector<PackedEvent> blocks = Blocks({3, 4, 5});
  auto matches = [](const PackedEvent& p, uint64_t before, std::vector<RunMatch>& out) {
    out.push_back({0, static_cast<uint32_t>(before), p.first_ip_or_index, ExecMode::k64Bit, {0, -1}});
    return p.first_ip_or_index != 0x1200;
  };
  RunMemo memo;
  const int key = 0;
  RunMemo::Outcome outcome = memo.Find(1, BatchRun{blocks.data(), &key, 3}, matches);
  CHECK_FALSE(outcome.settled);
  CHECK(outcome.matches.empty());
  // What it kept of the blocks before is dropped: a settled run after it has only its own.
  RunMemo::Outcome other = memo.Find(1, BatchRun{blocks.data(), &key, 2}, matches);
  CHECK(other.settled);
  CHECK(other.matches.size() == 2);
}

TEST_CASE("the memo grows and keeps every run") {
  const std::vector<PackedEvent> blocks = Blocks({1, 2});
  auto matches = [](const PackedEvent&, uint64_t, std::vector<RunMatch>&) { return true; };
  RunMemo memo;
  std::vector<int> keys(5000);
  for (int& key : keys) CHECK(memo.Find(1, BatchRun{blocks.data(), &key, 2}, matches).settled);
  int calls = 0;
  auto counted = [&](const PackedEvent&, uint64_t, std::vector<RunMatch>&) { return ++calls, true; };
  for (int& key : keys) memo.Find(1, BatchRun{blocks.data(), &key, 2}, counted);
  CHECK(calls == 0);
  CHECK(memo.runs() == 5000);
}

TEST_CASE("a run's note gives its outcome without the table, to the memo that wrote it") {
  const std::vector<PackedEvent> blocks = Blocks({3, 4, 5});
  int calls = 0;
  auto matches = [&](const PackedEvent& p, uint64_t before, std::vector<RunMatch>& out) {
    ++calls;
    if (p.first_ip_or_index != 0x1000) out.push_back({0, static_cast<uint32_t>(before), p.first_ip_or_index, ExecMode::k64Bit, {-1, 0}});
    return true;
  };
  RunMemo memo;
  const int key = 0;
  RunNote note;
  const BatchRun run{blocks.data(), &key, 3, &note};
  RunMemo::Outcome first = memo.Find(7, run, matches);
  CHECK(calls == 3);
  CHECK(note.owner != 0);
  CHECK(note.count == 3);
  // From the note: the same outcome (even from another source: the note is the run's, which
  // one keeper holds).
  RunMemo::Outcome noted = memo.Find(8, run, matches);
  CHECK(calls == 3);
  CHECK(memo.runs() == 1);
  CHECK(noted.settled);
  CHECK(noted.insns == 12);
  REQUIRE(noted.matches.size() == 2);
  CHECK(noted.matches[0].ip == 0x1100);
  CHECK(noted.matches[1].position == 7);
  CHECK(noted.matches.data() == first.matches.data());
  // Another length: from the table (worked out once), and the note is then that length's.
  CHECK(memo.Find(7, BatchRun{blocks.data(), &key, 2, &note}, matches).insns == 7);
  CHECK(calls == 5);
  CHECK(note.count == 2);
  CHECK(memo.Find(7, run, matches).insns == 12);  // the table still has it
  CHECK(calls == 5);
  CHECK(note.count == 3);
  // Another memo does not read this one's note: it works the run out and notes it as its own.
  RunMemo other;
  auto unsettled = [&](const PackedEvent& p, uint64_t, std::vector<RunMatch>&) {
    ++calls;
    return p.first_ip_or_index != 0x1100;
  };
  CHECK_FALSE(other.Find(7, run, unsettled).settled);
  CHECK(calls == 7);
  CHECK_FALSE(other.Find(7, run, unsettled).settled);  // from its note now
  CHECK(calls == 7);
  CHECK(memo.Find(7, run, matches).settled);  // back to the first memo: its table
  CHECK(calls == 7);
}

}  // namespace
}  // namespace ptprof::delta
