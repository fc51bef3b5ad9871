// The drained sideband of a recording: what is learned from it and what a perf.data carries.
#include "src/record/intel_pt/sideband_facts.h"

#include <linux/perf_event.h>

#include <cstring>

#include <catch2/catch.hpp>

#include "sideband/perf/perf_abi.h"
#include "sideband/perf/perf_record.h"

using namespace ptprof;
using namespace ptprof::record::hw;

namespace {

class Ring {
 public:
  // A record with the trailer of sample_type TID|TIME|CPU|IDENTIFIER.
  void Add(uint32_t type, uint16_t misc, const std::vector<uint8_t>& body, uint32_t pid,
           uint64_t time, uint32_t cpu) {
    std::vector<uint8_t> r(8);
    r.insert(r.end(), body.begin(), body.end());
    Put(r, pid), Put(r, pid), Put(r, time), Put(r, cpu), Put(r, uint32_t{0}), Put(r, uint64_t{77});
    const uint16_t size = static_cast<uint16_t>(r.size());
    std::memcpy(r.data(), &type, 4);
    std::memcpy(r.data() + 4, &misc, 2);
    std::memcpy(r.data() + 6, &size, 2);
    bytes.insert(bytes.end(), r.begin(), r.end());
  }
  template <class T>
  static void Put(std::vector<uint8_t>& out, T v) {
    const auto* p = reinterpret_cast<const uint8_t*>(&v);
    out.insert(out.end(), p, p + sizeof v);
  }
  std::vector<uint8_t> bytes;
};

std::vector<uint8_t> Mmap2(uint32_t pid, uint64_t addr, const std::string& file, uint32_t prot) {
  std::vector<uint8_t> b;
  Ring::Put(b, pid), Ring::Put(b, pid), Ring::Put(b, addr), Ring::Put(b, uint64_t{0x1000});
  Ring::Put(b, uint64_t{0}), Ring::Put(b, uint64_t{0}), Ring::Put(b, uint64_t{0}),
      Ring::Put(b, uint64_t{0});
  Ring::Put(b, prot), Ring::Put(b, uint32_t{2});
  b.insert(b.end(), file.begin(), file.end());
  b.resize((b.size() + 8) / 8 * 8, 0);
  return b;
}

std::vector<uint8_t> Task(uint32_t pid, uint32_t tid) {
  std::vector<uint8_t> b;
  Ring::Put(b, pid), Ring::Put(b, pid), Ring::Put(b, tid), Ring::Put(b, tid), Ring::Put(b, uint64_t{9});
  return b;
}

HwAttr Attr() {
  HwAttr a;
  a.attr.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER;
  a.attr.sample_id_all = 1;
  return a;
}

}  // namespace

TEST_CASE("sideband facts: mappings, trace IDs, AUX flags, and the records carried") {
  Ring ring;
  ring.Add(perf::kRecordItraceStart, 0, Task(100, 100), 100, 500, 0);
  ring.Add(perf::kRecordMmap2, 0, Mmap2(100, 0x7f0000, "/lib/libc.so.6", 5), 100, 510, 0);
  ring.Add(perf::kRecordMmap2, 0, Mmap2(100, 0x600000, "/tmp/data", 3), 100, 520, 0);  // not exec
  std::vector<uint8_t> hw_id;
  Ring::Put(hw_id, uint64_t{0x100000022});
  ring.Add(perf::kRecordAuxOutputHwId, 0, hw_id, 100, 530, 1);
  ring.Add(perf::kRecordSwitch, 0x2000, {}, 100, 540, 0);
  ring.Add(perf::kRecordFork, 0, Task(100, 101), 100, 450, 0);
  std::vector<uint8_t> aux;
  Ring::Put(aux, uint64_t{0}), Ring::Put(aux, uint64_t{4096}), Ring::Put(aux, uint64_t{0x09});
  ring.Add(perf::kRecordAux, 0, aux, 100, 560, 0);
  ring.Add(perf::kRecordExit, 0, Task(100, 101), 100, 570, 0);  // a thread of the command
  ring.Add(perf::kRecordExit, 0, Task(100, 100), 100, 580, 0);  // the command itself

  SidebandFacts f = ReadSidebandFacts(Attr(), ring.bytes, 100);
  CHECK(f.problem.empty());
  REQUIRE(f.mappings.size() == 1);
  CHECK(f.mappings[0].filename == "/lib/libc.so.6");
  CHECK(f.mappings[0].address == 0x7f0000);
  CHECK(f.trace_ids == std::map<int, uint64_t>{{1, 0x22}});
  CHECK(f.aux_records == 1);
  CHECK(f.truncated == 1);
  CHECK(f.collision == 1);
  CHECK(f.carried_counts == std::map<std::string, uint64_t>{
                                {"PERF_RECORD_MMAP2", 2}, {"PERF_RECORD_SWITCH", 1},
                                {"PERF_RECORD_FORK", 1}, {"PERF_RECORD_EXIT", 1}});
  REQUIRE(f.first_time);
  CHECK(*f.first_time == 450);
  // The carried bytes are whole records again.
  perf::PerfEventAttr layout;
  layout.sample_type = Attr().attr.sample_type;
  layout.flags = uint64_t{1} << 18;
  auto again = perf::ParsePerfEventBuffer(f.carried, layout, "carried");
  REQUIRE(again);
  CHECK(again->size() == 5);

  ring.bytes.resize(ring.bytes.size() - 5);
  SidebandFacts cut = ReadSidebandFacts(Attr(), ring.bytes, 100);
  CHECK(cut.problem.find("the AUX events' sideband") != std::string::npos);
}
