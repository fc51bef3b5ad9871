// EtmDecoder::DecodeInParts end to end on a real buffer (TC2, 5 sources, repeated 32 times so that
// its 256 KiB pieces join): a consumer taking its stream in parts gets exactly the events of the
// decode in one piece, whether it folds every part or refuses some (whose pieces are then decoded
// again into it directly), and where pieces do not join (damage near a cut) the decode goes on
// in one piece over them and joins again after.
#include <atomic>
#include <memory>
#include <set>
#include <string>

#include <catch2/catch.hpp>

#include "decoders/etm/element_events.h"
#include "decoders/etm/etm_decoder.h"
#include "decoders/etm/snapshot_decode.h"
#include "src/model/decode_defaults.h"
#include "src/model/event_equality.h"

using namespace ptprof;
using namespace ptprof::etm;

namespace {

struct Collect : EventSink {
  std::vector<TraceEvent> events;
  int serial = 0;
  bool ended = false;
  void OnEvent(const TraceEvent& e) override { events.push_back(e); }
  void OnEnd() override { ended = true; }
};

// Parts numbered as they are made; those whose number `refuse` says yes to are refused.
class Parted : public PartedSink {
 public:
  explicit Parted(bool (*refuse)(int)) : refuse_(refuse) {}
  std::vector<TraceEvent> events;
  int folded = 0;
  bool ended = false;
  bool unended_part = false;

  std::unique_ptr<EventSink> NewPart() const override {
    auto part = std::make_unique<Collect>();
    part->serial = made_++;
    return part;
  }
  std::string Refusal(const EventSink& part) const override {
    return refuse_(static_cast<const Collect&>(part).serial) ? "the test refuses it" : "";
  }
  void Fold(std::unique_ptr<EventSink> part) override {
    auto& c = static_cast<Collect&>(*part);
    if (!c.ended) unended_part = true;
    events.insert(events.end(), c.events.begin(), c.events.end());
    ++folded;
  }
  void OnEvent(const TraceEvent& e) override { events.push_back(e); }
  void OnEnd() override { ended = true; }

 private:
  bool (*refuse_)(int);
  mutable std::atomic<int> made_{0};
};

struct Restore {
  ~Restore() {
    SetDefaultDecodeJobs(1);
    SetDefaultSegmentBytes(256u << 10);
  }
};

std::string Snap(const std::string& name) {
  return std::string(SHARED_TESTDATA) + "/opencsd/snapshots/" + name;
}

// The index of the first event where `a` and `b` differ, or their common size when one is a prefix
// of the other (equal: both sizes).
size_t FirstDifference(const std::vector<TraceEvent>& a, const std::vector<TraceEvent>& b) {
  size_t i = 0;
  while (i < a.size() && i < b.size() && SameEvent(a[i], b[i])) ++i;
  return i;
}

}  // namespace

TEST_CASE("a consumer in parts gets the events of the decode in one piece, parts refused or not") {
  auto tc2 = OpenSnapshotDecode(Snap("TC2"), {});
  if (!tc2) {
    WARN("SKIP: " << tc2.error().message);
    return;
  }
  Restore restore;
  std::vector<uint8_t> trace;
  for (int i = 0; i < 32; ++i) trace.insert(trace.end(), tc2->trace.begin(), tc2->trace.end());
  EtmDecoder* dec = tc2->decoder.get();
  SetDefaultDecodeJobs(1);
  Collect whole;
  const EtmDecodeStats one = dec->Decode(trace, whole);
  REQUIRE(whole.events.size() > 100000);

  SetDefaultDecodeJobs(2);
  SetDefaultSegmentBytes(256u << 10);
  struct Case {
    const char* name;
    bool (*refuse)(int);
  };
  const Case cases[] = {
      {"every part folded", [](int) { return false; }},
      {"odd parts refused", [](int serial) { return serial % 2 == 1; }},
      {"every part refused", [](int) { return true; }},
  };
  for (const Case& c : cases) {
    SECTION(c.name) {
      Parted parted(c.refuse);
      const EtmDecodeStats stats = dec->Decode(trace, parted);
      CHECK(parted.ended);
      CHECK_FALSE(parted.unended_part);
      CHECK(stats.segments == 4);
      CHECK(stats.joined == 3);
      CHECK(stats.instructions == one.instructions);
      CHECK(FirstDifference(parted.events, whole.events) == whole.events.size());
      CHECK(parted.events.size() == whole.events.size());
      CHECK(static_cast<uint64_t>(parted.folded) == stats.parts);
      if (c.refuse(1)) {
        CHECK(stats.parts_redone >= 2);
        CHECK(stats.redone_because == "the test refuses it");
      } else {
        CHECK(stats.parts == 4);
        CHECK(stats.parts_redone == 0);
      }
    }
  }
}

namespace {

// TC2 repeated to 2 MiB, eight pieces of 256 KiB, with damage at the start of each piece in
// `cuts`: a stretch of another copy's frames, then a copy's first 8000 bytes (a packet cut short),
// before whole copies again. The decodes of the pieces either side of such a cut do not agree.
std::vector<uint8_t> DamagedAtCuts(const std::vector<uint8_t>& one, std::set<int> cuts) {
  std::vector<uint8_t> seam(one.begin() + 8000, one.begin() + 17600);
  seam.insert(seam.end(), one.begin(), one.begin() + 8000);
  std::vector<uint8_t> trace;
  for (int k = 0; k < 8; ++k) {
    std::vector<uint8_t> piece;
    if (cuts.count(k)) piece = seam;
    for (int c = 0; c < 8; ++c) piece.insert(piece.end(), one.begin(), one.end());
    trace.insert(trace.end(), piece.begin(), piece.begin() + (256 << 10));
  }
  return trace;
}

}  // namespace

TEST_CASE("a piece that does not join is decoded again with the one before, and the rest still join") {
  auto tc2 = OpenSnapshotDecode(Snap("TC2"), {});
  if (!tc2) {
    WARN("SKIP: " << tc2.error().message);
    return;
  }
  REQUIRE(tc2->trace.size() == 32768);
  Restore restore;
  SetDefaultSegmentBytes(256u << 10);
  EtmDecoder* dec = tc2->decoder.get();
  struct Case {
    const char* name;
    std::set<int> cuts;
    uint64_t joined, stretched;
    bool rest_in_one_piece;
  };
  const Case cases[] = {
      {"damage at one cut", {3}, 6, 1, false},
      {"damage at two cuts in a row", {2, 3}, 5, 2, false},
      {"damage at every cut: after two the rest is decoded in one piece", {1, 2, 3, 4, 5, 6, 7}, 0,
       2, true},
  };
  for (const Case& c : cases) {
    SECTION(c.name) {
      const std::vector<uint8_t> trace = DamagedAtCuts(tc2->trace, c.cuts);
      SetDefaultDecodeJobs(1);
      Collect whole;
      const EtmDecodeStats one = dec->Decode(trace, whole);
      REQUIRE(whole.events.size() > 100000);
      SetDefaultDecodeJobs(2);
      auto check = [&](const std::vector<TraceEvent>& events, const EtmDecodeStats& stats) {
        CHECK(stats.segments == 8);
        CHECK(stats.joined == c.joined);
        CHECK(stats.stretched == c.stretched);
        CHECK(stats.sequential_because.empty() == !c.rest_in_one_piece);
        CHECK(stats.instructions == one.instructions);
        CHECK(stats.fatal_errors == one.fatal_errors);
        CHECK(FirstDifference(events, whole.events) == whole.events.size());
        CHECK(events.size() == whole.events.size());
      };
      SECTION("in parts") {
        Parted parted([](int) { return false; });
        const EtmDecodeStats stats = dec->Decode(trace, parted);
        CHECK(parted.ended);
        check(parted.events, stats);
        CHECK(static_cast<uint64_t>(parted.folded) == stats.parts + stats.rest_parts);
        if (!c.rest_in_one_piece) CHECK(stats.parts == 8 - c.stretched);
        // The rest in one piece is consumed in parts on a second thread (src/model/part_pipe.h).
        CHECK((stats.rest_parts > 0) == c.rest_in_one_piece);
        CHECK(stats.rest_parts_refused == 0);
      }
      SECTION("in parts, the rest's parts refused from the fourth made on") {
        Parted parted([](int serial) { return serial >= 3; });
        const EtmDecodeStats stats = dec->Decode(trace, parted);
        check(parted.events, stats);
        if (c.rest_in_one_piece) {
          CHECK(stats.rest_parts_refused == 1);  // then the rest goes to the consumer directly
          CHECK(HowDecoded(stats).find("a part was refused") != std::string::npos);
        }
      }
      SECTION("in pieces") {
        Collect collected;
        const EtmDecodeStats stats = dec->Decode(trace, collected);
        check(collected.events, stats);
      }
    }
  }
}

TEST_CASE("a source that loses synchronisation in the first piece does not stop the joins") {
  auto tc2 = OpenSnapshotDecode(Snap("TC2"), {});
  if (!tc2) {
    WARN("SKIP: " << tc2.error().message);
    return;
  }
  Restore restore;
  SetDefaultSegmentBytes(256u << 10);
  EtmDecoder* dec = tc2->decoder.get();
  // Three copies, then one cut short at 30000 bytes (a source loses synchronisation there, at
  // about 0x1f500), then whole copies to 2 MiB.
  const std::vector<uint8_t>& one = tc2->trace;
  std::vector<uint8_t> trace;
  for (int c = 0; c < 3; ++c) trace.insert(trace.end(), one.begin(), one.end());
  trace.insert(trace.end(), one.begin(), one.begin() + 30000);
  for (int c = 0; c < 60; ++c) trace.insert(trace.end(), one.begin(), one.end());
  SetDefaultDecodeJobs(1);
  Collect whole;
  dec->Decode(trace, whole);
  bool lost_in_first_piece = false;  // else the test proves nothing
  for (const TraceEvent& e : whole.events)
    if (IsNoSync(e) && !IsDecoderStart(e) && e.header.offset < (256u << 10)) lost_in_first_piece = true;
  REQUIRE(lost_in_first_piece);
  SetDefaultDecodeJobs(2);
  Parted parted([](int) { return false; });
  const EtmDecodeStats stats = dec->Decode(trace, parted);
  CHECK(stats.segments == 8);
  CHECK(stats.joined == 7);
  CHECK(stats.stretched == 0);
  CHECK(stats.sequential_because.empty());
  CHECK(FirstDifference(parted.events, whole.events) == whole.events.size());
  CHECK(parted.events.size() == whole.events.size());
}
