// PieceJoins on a real buffer (TC2, 5 sources, repeated 8 times, planned in pieces of 64 KiB):
// pieces that did not join are gone over by one stretch, the joins are given up after
// kStretchPieces pieces so or at a piece that cannot be taken, and the rest of the buffer is
// decoded in one piece, by the stretch or by a fresh decoder: the events of the decode in one
// piece either way.
#include <catch2/catch.hpp>

#include "decoders/etm/etm_piece_joins.h"
#include "decoders/etm/tc2_repeated_test_support.h"

using namespace ptprof;
using namespace ptprof::etm;

TEST_CASE("the joins given up, the rest of the buffer is decoded in one piece") {
  auto one = OpenTc2Repeated(8);
  auto tc2 = OpenTc2Repeated(8);
  if (!one || !tc2) {
    WARN("SKIP: TC2 snapshot not available");
    return;
  }
  const std::vector<TraceEvent> whole = DecodeInOnePiece(*one->decoder, one->trace);
  REQUIRE(whole.size() > 10000);

  const std::vector<EtmSegment> plan = PlanEtmSegments(tc2->trace.size(), 64 << 10, 16, 16 << 10);
  REQUIRE(plan.size() == 4);
  CollectEvents stream;
  PieceJoins joins(*tc2->decoder, tc2->trace, plan, stream);
  const EtmDecodeStats& total = joins.total();
  CHECK(total.segments == 4);
  CHECK(total.bytes == tc2->trace.size());
  bool halted = false, let_go = false;
  auto decode_rest = [&](size_t held, size_t skip) {
    joins.DecodeRest(held, skip, [&] { halted = true; }, [&] { let_go = true; });
  };

  SECTION("after kStretchPieces pieces gone over, the stretch decodes on to the end") {
    static_assert(kStretchPieces == 3);
    REQUIRE(joins.Disagree(1, 0, 0));  // from piece 0's first byte, over piece 1
    REQUIRE(joins.LostSync(2, 0x1234, 0, 0));
    CHECK(joins.stretch()->pieces() == 3);
    CHECK_FALSE(joins.given_up());
    CHECK_FALSE(joins.Disagree(3, 0, 0));
    CHECK(joins.given_up());
    CHECK(total.stretched == 2);
    CHECK(total.stretched_because ==
          "the segments at offsets 0 and " + HexOffset(plan[1].begin) +
              " do not agree where they overlap");
    CHECK(total.sequential_because == "the segments at offsets " + HexOffset(plan[2].begin) +
                                          " and " + HexOffset(plan[3].begin) +
                                          " do not agree where they overlap");
    decode_rest(0, 0);
    CHECK(halted);
    CHECK_FALSE(let_go);  // no fresh decoder: the workers need not be waited for
    CHECK(SameEvents(stream.events, whole));
  }
  SECTION("without a stretch, a fresh decoder from the held piece's start") {
    joins.DecoderError(2);
    CHECK(joins.given_up());
    CHECK(joins.stretch() == nullptr);
    CHECK(total.sequential_because ==
          "a decoder error in the segment at offset " + HexOffset(plan[2].begin));
    decode_rest(0, 0);
    CHECK(halted);
    CHECK(let_go);
    CHECK(SameEvents(stream.events, whole));
  }
  SECTION("given up at the first piece: from the buffer's start, nothing skipped") {
    joins.CannotMakeDecoder(0, "no memory");
    CHECK(total.sequential_because == "cannot make another decoder: no memory");
    CHECK_FALSE(joins.StretchOver(0, "why", 0, 0));  // the first piece has none before it
    decode_rest(3, 12345);
    CHECK(SameEvents(stream.events, whole));
  }
  SECTION("not given up: nothing more is decoded") {
    decode_rest(0, 0);
    CHECK_FALSE(halted);
    CHECK(stream.events.empty());
  }
}
