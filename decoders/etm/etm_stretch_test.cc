// OnePieceStretch and EtmDecoder::DecodeOn on a real buffer (TC2, 5 sources, repeated 8 times):
// a decode fed on in several calls makes the events of one call, and a stretch passes its events
// on up to each cut and keeps the rest as its tail.
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "decoders/etm/etm_stretch.h"
#include "decoders/etm/tc2_repeated_test_support.h"

using namespace ptprof;
using namespace ptprof::etm;

namespace {

// A fresh decoder of TC2 x8 and the events of that buffer's decode in one piece by another.
struct Fixture {
  Tc2Repeated tc2;
  std::vector<TraceEvent> whole;
};
// Nothing, with a SKIP warning, where ../shared/testdata is not there.
std::optional<Fixture> OpenFixture() {
  auto one = OpenTc2Repeated(8);
  auto tc2 = OpenTc2Repeated(8);
  if (!one || !tc2) {
    WARN("SKIP: TC2 snapshot not available");
    return std::nullopt;
  }
  std::vector<TraceEvent> whole = DecodeInOnePiece(*one->decoder, one->trace);
  return Fixture{std::move(*tc2), std::move(whole)};
}

// The index of the first event at or past byte `offset`.
size_t FirstAt(const std::vector<TraceEvent>& events, uint64_t offset) {
  size_t k = 0;
  while (k < events.size() && events[k].header.offset < offset) ++k;
  return k;
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
  auto f = OpenFixture();
  if (!f) return;
  const std::vector<TraceEvent>& whole = f->whole;
  REQUIRE(whole.size() > 10000);
  CollectEvents fed;
  std::vector<uint8_t> marks;
  const uint64_t a = 80 << 10, b = 160 << 10;  // frame multiples, not at a copy's start
  EtmDecoder& three = *f->tc2.decoder;
  three.DecodePiece(f->tc2.trace, 0, a, false, fed, marks);
  three.DecodeOn(f->tc2.trace, a, b, false, fed, marks);
  const EtmDecodeStats stats = three.DecodeOn(f->tc2.trace, b, f->tc2.trace.size(), true, fed, marks);
  CHECK(stats.fatal_errors == 0);
  REQUIRE(fed.events.size() == whole.size());
  CHECK(Same(fed.events, 0, whole, 0, whole.size()));
}

TEST_CASE("a stretch passes its events on up to each cut and keeps the rest as its tail") {
  auto f = OpenFixture();
  if (!f) return;
  const std::vector<TraceEvent>& whole = f->whole;
  Tc2Repeated* tc2 = &f->tc2;
  const uint64_t cut = 96 << 10, end = 112 << 10;
  const size_t at_cut = FirstAt(whole, cut);

  CollectEvents stream;
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

  SECTION("finished, it passes its tail and everything after it") {
    REQUIRE(stretch.Finish(tc2->trace));
    CHECK(stretch.tail().size() == 0);
    REQUIRE(stream.events.size() == whole.size());
    CHECK(Same(stream.events, 0, whole, 0, whole.size()));
    CHECK(total.instructions > 0);
  }
  SECTION("extended to another cut, its tail goes on from that cut") {
    const uint64_t cut2 = 192 << 10;
    REQUIRE(stretch.Extend(tc2->trace, 208 << 10, cut2, false));
    const size_t at_cut2 = FirstAt(whole, cut2);
    CHECK(stream.events.size() == at_cut2);
    CHECK(Same(stream.events, 0, whole, 0, at_cut2));
    REQUIRE(stretch.tail().size() > 0);
    CHECK(SameEvent(stretch.tail()[0], whole[at_cut2]));
  }
}

TEST_CASE("a stretch skips the events the stream has, in its tail too") {
  auto f = OpenFixture();
  if (!f) return;
  const std::vector<TraceEvent>& whole = f->whole;
  Tc2Repeated* tc2 = &f->tc2;
  const uint64_t cut = 96 << 10;
  const size_t skip = FirstAt(whole, cut) + 5;  // the stream has five of the tail's events already

  CollectEvents stream;
  EtmDecodeStats total;
  EventPasser pass(stream, total);
  EventChunkPool pool;
  OnePieceStretch stretch(std::move(tc2->decoder), pass, pool, 0, skip);
  REQUIRE(stretch.Extend(tc2->trace, 112 << 10, cut, false));
  CHECK(stream.events.empty());
  CHECK(stretch.from() == 5);
  REQUIRE(stretch.Finish(tc2->trace));
  REQUIRE(stream.events.size() == whole.size() - skip);
  CHECK(stretch.passed() == whole.size());
  // Timestamps the skipped events carried are not known to the passer: compare besides them.
  for (size_t k = 0; k < stream.events.size(); ++k) {
    INFO("event " << k);
    REQUIRE(SameEventBesidesTsc(stream.events[k], whole[skip + k]));
  }
}

TEST_CASE("a stretch whose decoder meets an error passes on only the events before it") {
  auto f = OpenFixture();
  auto one = OpenTc2Repeated(8);
  if (!f || !one) return;  // OpenFixture said SKIP
  // Random bytes over 4 KiB at 100000: a decoder error there (OpenCSD's packet decoder gives up).
  std::vector<uint8_t> damaged = f->tc2.trace;
  uint32_t x = 12345;
  for (size_t k = 100000; k < 104096; ++k) {
    x = x * 1103515245 + 12345;
    damaged[k] = static_cast<uint8_t>(x >> 16);
  }
  const std::vector<TraceEvent> whole = DecodeInOnePiece(*one->decoder, damaged);
  size_t error = 0;  // the decode in one piece's first decoder error
  while (error < whole.size() &&
         !(std::holds_alternative<TraceGap>(whole[error].body) &&
           std::get<TraceGap>(whole[error].body).detail.rfind("decoder error", 0) == 0))
    ++error;
  REQUIRE(error < whole.size());

  CollectEvents stream;
  EtmDecodeStats total;
  EventPasser pass(stream, total);
  EventChunkPool pool;
  OnePieceStretch stretch(std::move(f->tc2.decoder), pass, pool, 0, 0);
  CHECK_FALSE(stretch.Extend(damaged, 144 << 10, 128 << 10, false));
  CHECK(stretch.passed() == error);
  REQUIRE(stream.events.size() == error);
  CHECK(Same(stream.events, 0, whole, 0, error));
  CHECK_FALSE(stretch.Extend(damaged, 200 << 10, 192 << 10, false));  // stays failed
  CHECK_FALSE(stretch.Finish(damaged));
  CHECK(stream.events.size() == error);
}

TEST_CASE("a stretch goes on from the held piece's decode without decoding it again") {
  auto f = OpenFixture();
  if (!f) return;
  const std::vector<TraceEvent>& whole = f->whole;
  Tc2Repeated* tc2 = &f->tc2;
  // The held piece as a worker decodes it: from byte 0 on past its cut, to 80 KiB.
  const uint64_t held_end = 80 << 10, held_cut = 64 << 10;
  EventChunkPool pool;
  struct Into : EventSink {
    EventChunks events;
    void OnEvent(const TraceEvent& e) override { events.push_back(e); }
  } piece;
  piece.events = EventChunks(&pool);
  std::vector<uint8_t> marks;
  tc2->decoder->DecodePiece(tc2->trace, 0, held_end, false, piece, marks);
  REQUIRE(piece.events.size() == marks.size());
  const size_t at_held_cut = FirstAt(whole, held_cut);

  CollectEvents stream;
  EtmDecodeStats total;
  EventPasser pass(stream, total);
  // The stream has the held piece's events up to its cut and three more.
  const size_t skip = at_held_cut + 3;
  for (size_t k = 0; k < skip; ++k) pass.Pass(piece.events[k], marks[k]);

  SECTION("its whole events kept") {
    HeldDecode held{std::move(tc2->decoder), held_end, std::move(piece.events), std::move(marks), 0};
    OnePieceStretch stretch(std::move(held), pass, pool, 0, skip);
    REQUIRE(stretch.Extend(tc2->trace, 144 << 10, 128 << 10, false));
    CHECK(stretch.passed() == FirstAt(whole, 128 << 10));
    REQUIRE(stretch.Finish(tc2->trace));
    CHECK(stretch.passed() == whole.size());
  }
  SECTION("its tail kept, from the cut on") {
    EventChunks tail(&pool);
    std::vector<uint8_t> tail_marks;
    for (size_t k = at_held_cut; k < piece.events.size(); ++k) {
      tail.push_back(piece.events[k]);
      tail_marks.push_back(marks[k]);
    }
    HeldDecode held{std::move(tc2->decoder), held_end, std::move(tail), std::move(tail_marks),
                    at_held_cut};
    OnePieceStretch stretch(std::move(held), pass, pool, 0, skip);
    REQUIRE(stretch.Extend(tc2->trace, 144 << 10, 128 << 10, false));
    REQUIRE(stretch.Finish(tc2->trace));
    CHECK(stretch.passed() == whole.size());
  }
  REQUIRE(stream.events.size() == whole.size());
  CHECK(Same(stream.events, 0, whole, 0, whole.size()));
}
