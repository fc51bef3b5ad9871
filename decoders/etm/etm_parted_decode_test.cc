// EtmDecoder::DecodeInParts end to end on a real buffer (TC2, 5 sources, repeated 32 times so that
// its 256 KiB pieces join): a consumer taking its stream in parts gets exactly the events of the
// decode in one piece, whether it folds every part or refuses some (whose pieces are then decoded
// again into it directly).
#include <atomic>
#include <memory>
#include <string>

#include <catch2/catch.hpp>

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
