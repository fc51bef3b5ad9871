// OnePieceStretch and EtmDecoder::DecodeOn on a real buffer (TC2, 5 sources, repeated 8 times):
// a decode fed on in several calls makes the events of one call, and a stretch passes its events
// on up to each cut and keeps the rest as its tail.
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "decoders/etm/etm_stretch.h"
#include "decoders/etm/snapshot_decode.h"
#include "src/model/event_equality.h"

using namespace ptprof;
using namespace ptprof::etm;

namespace {

struct Collect : EventSink {
  std::vector<TraceEvent> events;
  void OnEvent(const TraceEvent& e) override { events.push_back(e); }
};

std::string Snap(const std::string& name) {
  return std::string(SHARED_TESTDATA) + "/opencsd/snapshots/" + name;
}

// A fresh decoder of TC2 and its buffer repeated 8 times (256 KiB).
struct Tc2 {
  std::unique_ptr<EtmDecoder> decoder;
  std::vector<uint8_t> trace;
};
std::optional<Tc2> OpenTc2() {
  auto tc2 = OpenSnapshotDecode(Snap("TC2"), {});
  if (!tc2) return std::nullopt;
  Tc2 out{std::move(tc2->decoder), {}};
  for (int i = 0; i < 8; ++i) out.trace.insert(out.trace.end(), tc2->trace.begin(), tc2->trace.end());
  return out;
}

// The events of `decoder` fed the whole of `trace` in one piece.
std::vector<TraceEvent> InOnePiece(EtmDecoder& decoder, const std::vector<uint8_t>& trace) {
  Collect all;
  std::vector<uint8_t> marks;
  decoder.DecodePiece(trace, 0, trace.size(), true, all, marks);
  return all.events;
}

bool Same(const std::vector<TraceEvent>& a, size_t a_from, const std::vector<TraceEvent>& b,
          size_t b_from, size_t count) {
  if (a_from + count > a.size() || b_from + count > b.size()) return false;
  for (size_t k = 0; k < count; ++k)
    if (!SameEvent(a[a_from + k], b[b_from + k])) return false;
  return true;
}

}  // namespace

TEST_CASE("a CoreSight decode fed on in three calls makes the events of one call") {
  auto one = OpenTc2();
  auto three = OpenTc2();
  if (!one || !three) {
    WARN("SKIP: TC2 snapshot not available");
    return;
  }
  const std::vector<TraceEvent> whole = InOnePiece(*one->decoder, one->trace);
  REQUIRE(whole.size() > 10000);
  Collect fed;
  std::vector<uint8_t> marks;
  const uint64_t a = 80 << 10, b = 160 << 10;  // frame multiples, not at a copy's start
  three->decoder->DecodePiece(three->trace, 0, a, false, fed, marks);
  three->decoder->DecodeOn(three->trace, a, b, false, fed, marks);
  const EtmDecodeStats stats =
      three->decoder->DecodeOn(three->trace, b, three->trace.size(), true, fed, marks);
  CHECK(stats.fatal_errors == 0);
  REQUIRE(fed.events.size() == whole.size());
  CHECK(Same(fed.events, 0, whole, 0, whole.size()));
}

TEST_CASE("a stretch passes its events on up to each cut and keeps the rest as its tail") {
  auto one = OpenTc2();
  auto tc2 = OpenTc2();
  if (!one || !tc2) {
    WARN("SKIP: TC2 snapshot not available");
    return;
  }
  const std::vector<TraceEvent> whole = InOnePiece(*one->decoder, one->trace);
  const uint64_t cut = 96 << 10, end = 112 << 10;
  size_t at_cut = 0;  // the first event at or past the cut
  while (whole[at_cut].header.offset < cut) ++at_cut;

  Collect stream;
  EtmDecodeStats total;
  EventPasser pass(stream, total);
  EventChunkPool pool;
  OnePieceStretch stretch(std::move(tc2->decoder), pass, pool, 0, 0);
  REQUIRE(stretch.Extend(tc2->trace, end, cut, false));
  CHECK(stretch.pieces() == 2);
  CHECK(stream.events.size() == at_cut);
  CHECK(stretch.passed() == at_cut);
  CHECK(Same(stream.events, 0, whole, 0, at_cut));
  const EventChunks& tail = stretch.tail();
  REQUIRE(tail.size() > 0);
  CHECK(stretch.from() == 0);
  for (size_t k = 0; k < tail.size(); ++k) {
    INFO("tail event " << k);
    REQUIRE(SameEvent(tail[k], whole[at_cut + k]));
  }

  SECTION("extended to the end, it passes its tail and everything after it") {
    REQUIRE(stretch.Extend(tc2->trace, tc2->trace.size(), UINT64_MAX, true));
    CHECK(stretch.tail().size() == 0);
    REQUIRE(stream.events.size() == whole.size());
    CHECK(Same(stream.events, 0, whole, 0, whole.size()));
    CHECK(total.instructions > 0);
  }
  SECTION("extended to another cut, its tail goes on from that cut") {
    const uint64_t cut2 = 192 << 10;
    REQUIRE(stretch.Extend(tc2->trace, 208 << 10, cut2, false));
    size_t at_cut2 = at_cut;
    while (whole[at_cut2].header.offset < cut2) ++at_cut2;
    CHECK(stream.events.size() == at_cut2);
    CHECK(Same(stream.events, 0, whole, 0, at_cut2));
    REQUIRE(stretch.tail().size() > 0);
    CHECK(SameEvent(stretch.tail()[0], whole[at_cut2]));
  }
}

TEST_CASE("a stretch skips the events the stream has, in its tail too") {
  auto one = OpenTc2();
  auto tc2 = OpenTc2();
  if (!one || !tc2) {
    WARN("SKIP: TC2 snapshot not available");
    return;
  }
  const std::vector<TraceEvent> whole = InOnePiece(*one->decoder, one->trace);
  const uint64_t cut = 96 << 10;
  size_t at_cut = 0;
  while (whole[at_cut].header.offset < cut) ++at_cut;
  const size_t skip = at_cut + 5;  // the stream has five of the tail's events already

  Collect stream;
  EtmDecodeStats total;
  EventPasser pass(stream, total);
  EventChunkPool pool;
  OnePieceStretch stretch(std::move(tc2->decoder), pass, pool, 0, skip);
  REQUIRE(stretch.Extend(tc2->trace, 112 << 10, cut, false));
  CHECK(stream.events.empty());
  CHECK(stretch.from() == 5);
  REQUIRE(stretch.Extend(tc2->trace, tc2->trace.size(), UINT64_MAX, true));
  REQUIRE(stream.events.size() == whole.size() - skip);
  CHECK(stretch.passed() == whole.size());
  // Timestamps the skipped events carried are not known to the passer: compare besides them.
  for (size_t k = 0; k < stream.events.size(); ++k) {
    INFO("event " << k);
    REQUIRE(SameEventBesidesTsc(stream.events[k], whole[skip + k]));
  }
}
