#include "decoders/pt/fast/tnt_runs.h"

#include <catch2/catch.hpp>

#include "decoders/pt/fast/sample_graph_testing.h"

using namespace ptprof;
using namespace ptprof::pt;
using namespace ptprof::pt::testing;

namespace {

using Graph = SampleGraph;

BlockEnd EndOf(const RunBlock& block) { return static_cast<BlockEnd>(block.end); }

}  // namespace

TEST_CASE("A taken branch, a call, its return and a syscall the TIP decides", "[tnt_runs]") {
  Graph graph;
  fast::TntRuns& runs = graph.blocks->runs();
  // je taken (1), ret compressed (1): 1000-1001 je, 1005 call, 1010-1011 ret, then the syscall
  // at 100a after the last bit.
  const fast::TntRun& run = runs.Find(graph.At(0x1000), 0, ptem_64bit, false, 0b11, 2);
  REQUIRE(run.core().blocks == 3);
  REQUIRE(run.all.blocks == 4);
  CHECK(run.bits == 2);
  CHECK(run.whole);  // all the key's bits
  CHECK_FALSE(run.pops);
  CHECK(run.blocks()[0].first_ip == 0x1000);
  CHECK(run.blocks()[0].span == 1);
  CHECK(run.blocks()[0].insns == 2);
  CHECK(EndOf(run.blocks()[0]) == BlockEnd::kCondTaken);
  CHECK(run.blocks()[1].first_ip == 0x1005);
  CHECK(EndOf(run.blocks()[1]) == BlockEnd::kCall);
  CHECK(run.blocks()[2].first_ip == 0x1010);
  CHECK(EndOf(run.blocks()[2]) == BlockEnd::kReturn);
  CHECK(run.blocks()[3].first_ip == 0x100a);
  CHECK(EndOf(run.blocks()[3]) == BlockEnd::kSyscall);
  CHECK(run.ends_in_tip);
  // A trailing part: the core's stop and the TIP memo lie right before the header.
  CHECK(run.trails);
  CHECK(&run.core() != &run.all);
  CHECK(run.tip().next == nullptr);
  CHECK(reinterpret_cast<const std::byte*>(run.tail()) + sizeof(fast::RunTail) ==
        reinterpret_cast<const std::byte*>(&run));
  CHECK(reinterpret_cast<const std::byte*>(run.ops()) ==
        reinterpret_cast<const std::byte*>(&run) + sizeof(fast::TntRun));
  CHECK(run.core().insns == 2 + 1 + 2);
  CHECK(run.all.insns == 2 + 1 + 2 + 1);
  CHECK(run.core().next_ip == 0x100a);
  // The call's push and the return's pop, in order.
  REQUIRE(run.all.ops == 2);
  CHECK(run.core().ops == 2);
  CHECK(run.ops()[0] == 0x100a);
  CHECK(run.ops()[1] == fast::TntRun::kPop);
  // The same key finds the same run.
  CHECK(&runs.Find(graph.At(0x1000), 0, ptem_64bit, false, 0b11, 2) == &run);
  CHECK(runs.size() == 1);
}

TEST_CASE("A branch not taken, then direct calls after the last bit", "[tnt_runs]") {
  Graph graph;
  fast::TntRuns& runs = graph.blocks->runs();
  const fast::TntRun& run = runs.Find(graph.At(0x1000), 0, ptem_64bit, false, 0b0, 1);
  REQUIRE(run.core().blocks == 1);
  CHECK(EndOf(run.blocks()[0]) == BlockEnd::kCondNotTaken);
  CHECK(run.core().next_ip == 0x1003);
  // After the bit: 1003-1005 ends in the call, then the return at 1011 needs a bit: it stops.
  REQUIRE(run.all.blocks == 2);
  CHECK(run.blocks()[1].first_ip == 0x1003);
  CHECK(run.blocks()[1].insns == 3);
  CHECK(EndOf(run.blocks()[1]) == BlockEnd::kCall);
  CHECK(run.all.next_ip == 0x1010);
  CHECK_FALSE(run.ends_in_tip);
  REQUIRE(run.all.ops == 1);
  CHECK(run.core().ops == 0);
  CHECK(run.ops()[0] == 0x100a);
}

TEST_CASE("A run that starts with a return takes the caller's address from its key",
          "[tnt_runs]") {
  Graph graph;
  fast::TntRuns& runs = graph.blocks->runs();
  const fast::TntRun& run = runs.Find(graph.At(0x1010), 0x100a, ptem_64bit, false, 0b1, 1);
  REQUIRE(run.core().blocks == 1);
  CHECK(run.pops);
  CHECK(run.core().next_ip == 0x100a);
  CHECK(run.all.ops == 1 - 1);  // the caller's pop is the run's `pops`, not an operation
  // Another return address is another run.
  const fast::TntRun& other = runs.Find(graph.At(0x1010), 0x1003, ptem_64bit, false, 0b1, 1);
  CHECK(&other != &run);
  CHECK(other.core().next_ip == 0x1003);
  // A return whose bit says not taken is no run (the plain walk reports the error).
  CHECK(runs.Find(graph.At(0x1010), 0x100a, ptem_64bit, false, 0b0, 1).core().blocks == 0);
}

TEST_CASE("Without a return address, a run stops before a return to the caller", "[tnt_runs]") {
  Graph graph;
  fast::TntRuns& runs = graph.blocks->runs();
  // je not taken (0), then 1003-1005 call, 1010-1011 ret (1): the ret pops the run's own call;
  // the third bit would be the syscall's, but a syscall needs a TIP while bits are pending.
  const fast::TntRun& run = runs.Find(graph.At(0x1000), 0, ptem_64bit, false, 0b011, 3);
  REQUIRE(run.core().blocks == 3);
  CHECK(run.bits == 2);
  CHECK_FALSE(run.whole);
  CHECK(run.all.blocks == run.core().blocks);  // bits are left: no trailing part
  CHECK_FALSE(run.trails);
  CHECK(&run.core() == &run.all);  // nor a tail
  CHECK(run.core().next_ip == 0x100a);
}

TEST_CASE("Keyed with the caller's addresses, a run returns to them and goes on",
          "[tnt_runs]") {
  // 1000 je 1003; 1002 nop; 1003 ret; 1004 je 1007; 1006 nop; 1007 ret. A caller called 1000
  // from before 1004 (its return address), and its caller from before 2000.
  Graph graph({0x74, 0x01, 0x90, 0xc3, 0x74, 0x01, 0x90, 0xc3});
  fast::TntRuns& runs = graph.blocks->runs();
  const fast::CodeBlock* start = graph.At(0x1000);
  const fast::CallerTops caller{0x1004, 0x2000, 2};
  const uint64_t state = fast::TntRuns::State(0b1111, 4, false);
  // Without the caller's addresses: the je, then it stops before the ret, and says so: its key
  // sends the lookup deeper, and the run walked that far is kept under the key marked shallow.
  const fast::RunHead& short_head = runs.Head(start, state, {}, ptem_64bit, false, 0b1111, 4);
  CHECK(short_head.extends);
  const fast::TntRun& short_run = runs.Find(start, 0, ptem_64bit, false, 0b1111, 4);
  CHECK(short_run.state == fast::TntRuns::ShallowState(state));
  CHECK(runs.Known(start, fast::TntRuns::ShallowState(state), {}) == &short_run);
  REQUIRE(short_run.core().blocks == 1);
  CHECK(short_run.bits == 1);
  CHECK_FALSE(short_run.extends);
  CHECK(short_run.core().next_ip == 0x1003);
  fast::CallerKey deeper;
  REQUIRE(fast::TntRuns::DeeperKey(short_head, caller, deeper));
  CHECK(deeper == fast::CallerKey(0x1004));
  CHECK_FALSE(fast::TntRuns::DeeperKey(short_head, fast::CallerTops{}, deeper));
  // With the top one: the je, the ret to 1004 (an operation, after the run's own), the je at
  // 1004; the second ret would pop the caller's stack again: it stops there, and says so.
  const fast::RunHead& head = runs.Head(start, state, deeper, ptem_64bit, false, 0b1111, 4);
  CHECK(head.extends);
  const fast::TntRun& run = runs.Find(start, deeper, ptem_64bit, false, 0b1111, 4);
  REQUIRE(run.core().blocks == 3);
  CHECK(run.bits == 3);
  CHECK_FALSE(run.pops);
  CHECK_FALSE(run.extends);
  CHECK(run.blocks()[1].first_ip == 0x1003);
  CHECK(EndOf(run.blocks()[1]) == BlockEnd::kReturn);
  CHECK(run.blocks()[2].first_ip == 0x1004);
  CHECK(EndOf(run.blocks()[2]) == BlockEnd::kCondTaken);
  REQUIRE(run.core().ops == 1);
  CHECK(run.ops()[0] == fast::TntRun::kPop);
  CHECK(run.core().next_ip == 0x1007);
  REQUIRE(fast::TntRuns::DeeperKey(head, caller, deeper));
  CHECK(deeper == fast::CallerKey(0x1004, 0x2000));
  CHECK_FALSE(fast::TntRuns::DeeperKey(head, fast::CallerTops{0x1004, 0, 1}, deeper));
  // With both: the second ret goes to 2000, where no code is: the run ends there.
  const fast::TntRun& deep = runs.Find(start, deeper, ptem_64bit, false, 0b1111, 4);
  REQUIRE(deep.core().blocks == 4);
  CHECK(deep.bits == 4);
  CHECK(deep.whole);
  CHECK_FALSE(deep.extends);
  REQUIRE(deep.core().ops == 2);
  CHECK(deep.ops()[1] == fast::TntRun::kPop);
  CHECK(deep.core().next_ip == 0x2000);
  // Each fits where its addresses are on top of the caller's stack; the short one anywhere.
  const uint64_t shallow = fast::TntRuns::ShallowState(state);
  CHECK(run.Fits(start, shallow, fast::CallerTops{0x1004, 0, 1}));
  CHECK(run.Fits(start, shallow, caller));
  CHECK_FALSE(run.Fits(start, shallow, fast::CallerTops{0x1008, 0x2000, 2}));
  CHECK_FALSE(run.Fits(start, shallow, fast::CallerTops{}));
  CHECK(deep.Fits(start, state, caller));
  CHECK_FALSE(deep.Fits(start, state, fast::CallerTops{0x1004, 0, 1}));
  CHECK_FALSE(deep.Fits(start, state, fast::CallerTops{0x1004, 0x2008, 2}));
  CHECK(short_run.Fits(start, shallow, fast::CallerTops{}));
  // The run to take for each depth of the caller's stack: the deepest key its addresses reach.
  CHECK(runs.KnownFor(start, state, false, fast::CallerTops{}) == &short_run);
  CHECK(runs.KnownFor(start, state, false, fast::CallerTops{0x1004, 0, 1}) == &run);
  CHECK(runs.KnownFor(start, state, false, caller) == &deep);
  CHECK(runs.KnownFor(start, state, false, fast::CallerTops{0x1008, 0x2000, 2}) == nullptr);
  CHECK(&runs.FindFor(start, state, false, fast::CallerTops{0x1004, 0, 1}, ptem_64bit, false,
                      0b1111, 4) == &run);
  // A run from the ret takes the caller's address as its first pop, not an operation.
  const fast::TntRun& from_ret = runs.Find(graph.At(0x1003), 0x1004, ptem_64bit, false, 0b11, 2);
  REQUIRE(from_ret.core().blocks == 2);
  CHECK(from_ret.pops);
  CHECK(from_ret.core().ops == 0);
  CHECK(from_ret.core().next_ip == 0x1007);
}

TEST_CASE("Speculative runs are kept apart and carry the flag", "[tnt_runs]") {
  Graph graph;
  fast::TntRuns& runs = graph.blocks->runs();
  const fast::TntRun& plain = runs.Find(graph.At(0x1000), 0, ptem_64bit, false, 0b1, 1);
  const fast::TntRun& speculative = runs.Find(graph.At(0x1000), 0, ptem_64bit, true, 0b1, 1);
  CHECK(&plain != &speculative);
  CHECK((plain.blocks()[0].flags & kPackedSpeculative) == 0);
  CHECK((speculative.blocks()[0].flags & kPackedSpeculative) != 0);
}

TEST_CASE("A TNT-8 packet's byte gives the state of its bits, all pending", "[tnt_runs]") {
  // 0b0'1'01101'0: the stop bit, then five bits (01101, the next one the highest: not taken,
  // taken, taken, not, taken), over the opcode's 0.
  CHECK(fast::TntRuns::Tnt8State(0b01011010, false) == fast::TntRuns::State(0b01101, 5, false));
  for (unsigned byte = 4; byte < 256; byte += 2) {
    const unsigned payload = byte >> 1;
    unsigned count = 0;
    while ((payload >> (count + 1)) != 0) ++count;  // the stop bit is the highest set
    const uint64_t bits = payload & ((1u << count) - 1);
    INFO("byte " << byte);
    CHECK(fast::TntRuns::Tnt8State(static_cast<uint8_t>(byte), false) ==
          fast::TntRuns::State(bits, count, false));
    CHECK(fast::TntRuns::Tnt8State(static_cast<uint8_t>(byte), true) ==
          fast::TntRuns::State(bits, count, true));
    CHECK(fast::TntRuns::StateBits(fast::TntRuns::Tnt8State(static_cast<uint8_t>(byte), true)) ==
          count);
  }
}

TEST_CASE("A run remembers the last four runs taken after it, the latest first",
          "[tnt_runs]") {
  Graph graph;
  fast::TntRuns& runs = graph.blocks->runs();
  const fast::CodeBlock* start = graph.At(0x1000);
  const fast::TntRun& from = runs.Find(start, 0, ptem_64bit, false, 0b0, 1);
  const fast::TntRun& a = runs.Find(start, 0, ptem_64bit, false, 0b1, 1);
  const fast::TntRun& b = runs.Find(start, 0, ptem_64bit, false, 0b11, 2);
  const fast::ReturnStack empty;
  CHECK(from.follow() == nullptr);
  CHECK(from.FollowFor(start, a.state, empty) == nullptr);
  CHECK(from.FollowWithState(a.state) == nullptr);
  from.Followed(&a);
  CHECK(from.follow() == &a);
  from.Followed(&a);  // unchanged: nothing written
  CHECK(from.follows[1] == nullptr);
  from.Followed(&b);
  CHECK(from.follow() == &b);
  CHECK(from.follows[1] == &a);
  CHECK(from.follow_tags[0] == fast::TntRun::StateTag(b.state));
  CHECK(from.follow_tags[1] == fast::TntRun::StateTag(a.state));
  // Told by state without reading them, nothing changed.
  CHECK(from.FollowWithState(a.state) == &a);
  CHECK(from.follow() == &b);
  // One that fits becomes the latest; elsewhere, or with another state, none fits.
  CHECK(from.FollowFor(graph.At(0x1003), a.state, empty) == nullptr);
  CHECK(from.FollowFor(start, from.state, empty) == nullptr);
  CHECK(from.FollowFor(start, a.state, empty) == &a);
  CHECK(from.follow() == &a);
  CHECK(from.follows[1] == &b);
  // Four are kept: a fifth run drops the oldest.
  const fast::TntRun& c = runs.Find(start, 0, ptem_64bit, false, 0b111, 3);
  const fast::TntRun& d = runs.Find(start, 0, ptem_64bit, false, 0b1111, 4);
  const fast::TntRun& e = runs.Find(start, 0, ptem_64bit, false, 0b11111, 5);
  from.Followed(&c);
  from.Followed(&d);
  CHECK(from.follows[3] == &b);
  from.Followed(&e);
  CHECK(from.follow() == &e);
  CHECK(from.follows[1] == &d);
  CHECK(from.follows[2] == &c);
  CHECK(from.follows[3] == &a);
  CHECK(from.FollowFor(start, b.state, empty) == nullptr);
  // Taking one from further down moves only those above it.
  CHECK(from.FollowFor(start, c.state, empty) == &c);
  CHECK(from.follow() == &c);
  CHECK(from.follows[1] == &e);
  CHECK(from.follows[2] == &d);
  CHECK(from.follows[3] == &a);
}

TEST_CASE("Of follows with the same bits, the one keyed with the caller's address is taken",
          "[tnt_runs]") {
  Graph graph;
  fast::TntRuns& runs = graph.blocks->runs();
  const fast::TntRun& from = runs.Find(graph.At(0x1000), 0, ptem_64bit, false, 0b0, 1);
  const fast::CodeBlock* ret = graph.At(0x1010);
  const fast::TntRun& to_100a = runs.Find(ret, 0x100a, ptem_64bit, false, 0b1, 1);
  const fast::TntRun& to_1003 = runs.Find(ret, 0x1003, ptem_64bit, false, 0b1, 1);
  REQUIRE(to_100a.state == to_1003.state);
  from.Followed(&to_1003);
  from.Followed(&to_100a);
  fast::ReturnStack stack;
  stack.Push(0x1003);
  CHECK(from.FollowFor(ret, to_1003.state, stack) == &to_1003);
  CHECK(from.follow() == &to_1003);
  stack.Push(0x100a);
  CHECK(from.FollowFor(ret, to_100a.state, stack) == &to_100a);
  CHECK(from.FollowFor(ret, to_100a.state, fast::ReturnStack()) == nullptr);  // no caller
}
