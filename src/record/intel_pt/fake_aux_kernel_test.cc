#include "src/record/intel_pt/fake_aux_kernel.h"

#include <linux/perf_event.h>
#include <unistd.h>

#include <algorithm>

#include <chrono>
#include <thread>

#include <catch2/catch.hpp>

#include "sideband/perf/perf_record.h"
#include "src/record/intel_pt/aux_session.h"

namespace hw = ptprof::record::hw;

namespace {

std::vector<uint8_t> Pattern(size_t n) {
  std::vector<uint8_t> bytes(n);
  for (size_t i = 0; i < n; ++i) bytes[i] = static_cast<uint8_t>((i * 7 + i / 251) & 0xff);
  return bytes;
}

}  // namespace

TEST_CASE("AuxSession snapshots the newest bytes of a wrapping overwrite ring (fake kernel)") {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const std::vector<uint8_t> trace = Pattern(page * 40);
  hw::FakeAuxKernel kernel(trace, page);  // one page per millisecond
  hw::HwAttr attr;
  hw::AuxSession::Options options;
  options.aux_pages = 8;  // the ring wraps five times over the trace
  options.data_pages = 1;
  auto session = hw::AuxSession::Open(attr, 0, {-1, -1}, options, kernel);
  REQUIRE(session);
  REQUIRE((*session)->events() == 2);
  auto clock = (*session)->Clock(0);
  REQUIRE(clock);  // the fake publishes an identity conversion
  REQUIRE((*session)->Enable());
  for (int i = 0; i < 2000 && kernel.Written(1000) < trace.size(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  REQUIRE(kernel.Written(1000) == trace.size());
  auto whole = (*session)->Snapshot(0, page * 100);
  REQUIRE(whole);
  // The ring holds the last 8 pages of the trace.
  REQUIRE(whole->size() == page * 8);
  CHECK(std::equal(whole->begin(), whole->end(), trace.end() - static_cast<long>(page * 8)));
  auto part = (*session)->Snapshot(0, 100);
  REQUIRE(part);
  CHECK(std::vector<uint8_t>(trace.end() - 100, trace.end()) == *part);
  REQUIRE((*session)->Disable());
}

TEST_CASE("FakeAuxKernel stops writing while the output is paused") {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  hw::FakeAuxKernel kernel(Pattern(page * 400), 64);
  hw::HwAttr attr;
  hw::AuxSession::Options options;
  options.aux_pages = 4;
  options.data_pages = 1;
  auto session = hw::AuxSession::Open(attr, 0, {-1}, options, kernel);
  REQUIRE(session);
  REQUIRE((*session)->Enable());
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  REQUIRE(kernel.Ioctl(1000, PERF_EVENT_IOC_PAUSE_OUTPUT, 1) == 0);
  const uint64_t paused_at = kernel.Written(1000);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  CHECK(kernel.Written(1000) == paused_at);
  REQUIRE(kernel.Ioctl(1000, PERF_EVENT_IOC_PAUSE_OUTPUT, 0) == 0);
  for (int i = 0; i < 2000 && kernel.Written(1000) == paused_at; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  CHECK(kernel.Written(1000) > paused_at);
  CHECK(kernel.Ioctl(999, PERF_EVENT_IOC_ENABLE, 0) == -1);  // not an event
}

TEST_CASE("FakeAuxKernel reports the replay's mappings and paused output in the sideband ring") {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  hw::FakeAuxKernel kernel(Pattern(page), 64,
                           {{0x582b2b0000, 0x3000, 0, "/data/local/tmp/etm_test_loop"},
                            {0x7f0000001000, 0x1000, 0x1000, "/lib/libc.so"}});
  hw::HwAttr attr;
  attr.attr.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU |
                          PERF_SAMPLE_IDENTIFIER;
  attr.attr.sample_id_all = 1;
  hw::AuxSession::Options options;
  options.aux_pages = 4;
  options.data_pages = 1;
  auto session = hw::AuxSession::Open(attr, 4242, {3, 5}, options, kernel);
  REQUIRE(session);
  REQUIRE((*session)->Enable());
  for (int i = 0; i < 2000 && kernel.Written(1000) < page; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  auto snapshot = (*session)->Snapshot(0, page);  // pauses and resumes the output
  REQUIRE(snapshot);
  std::vector<uint8_t> first, second;
  (*session)->DrainSideband(0, first);
  (*session)->DrainSideband(1, second);
  ptprof::perf::PerfEventAttr layout;
  layout.sample_type = attr.attr.sample_type;
  layout.flags = uint64_t{1} << 18;  // sample_id_all
  auto records = ptprof::perf::ParsePerfEventBuffer(first, layout, "fake sideband");
  REQUIRE(records);
  std::vector<ptprof::perf::MmapRecord> mmaps;
  std::vector<ptprof::perf::AuxRecord> aux;
  for (const auto& r : *records) {
    if (const auto* m = std::get_if<ptprof::perf::MmapRecord>(&r.body)) mmaps.push_back(*m);
    if (const auto* a = std::get_if<ptprof::perf::AuxRecord>(&r.body)) aux.push_back(*a);
    CHECK(r.sample_id.cpu == 3u);
    CHECK(r.sample_id.pid == 4242u);
  }
  REQUIRE(mmaps.size() == 2);
  CHECK(mmaps[0].mmap2);
  CHECK(mmaps[0].executable);
  CHECK(mmaps[0].pid == 4242);
  CHECK(mmaps[0].addr == 0x582b2b0000);
  CHECK(mmaps[0].len == 0x3000);
  CHECK(mmaps[0].filename == "/data/local/tmp/etm_test_loop");
  CHECK(mmaps[1].pgoff == 0x1000);
  REQUIRE(aux.size() == 1);
  CHECK(aux[0].aux_size == page);
  CHECK(aux[0].flags == PERF_AUX_FLAG_OVERWRITE);
  // The mappings go to the first event only; the second one reports only its AUX data.
  auto other = ptprof::perf::ParsePerfEventBuffer(second, layout, "fake sideband 2");
  REQUIRE(other);
  for (const auto& r : *other) CHECK(std::get_if<ptprof::perf::MmapRecord>(&r.body) == nullptr);
}

TEST_CASE("normal mode: DrainAux takes every byte once while the ring wraps; a full ring loses "
          "trace and says so") {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const std::vector<uint8_t> trace = Pattern(page * 40);
  hw::HwAttr attr;
  attr.attr.sample_type = PERF_SAMPLE_TID;
  attr.attr.sample_id_all = 1;
  hw::AuxSession::Options options;
  options.aux_pages = 4;  // the trace wraps the area ten times
  options.data_pages = 1;
  options.snapshot = false;
  ptprof::perf::PerfEventAttr layout;
  layout.sample_type = attr.attr.sample_type;
  layout.flags = uint64_t{1} << 18;  // sample_id_all
  auto aux_records = [&](const std::vector<uint8_t>& sideband) {
    std::vector<ptprof::perf::AuxRecord> aux;
    auto records = ptprof::perf::ParsePerfEventBuffer(sideband, layout, "fake sideband");
    REQUIRE(records);
    for (const auto& r : *records)
      if (const auto* a = std::get_if<ptprof::perf::AuxRecord>(&r.body)) aux.push_back(*a);
    return aux;
  };
  {
    // Drained far faster than it is written (the area holds 64 ms of it): everything, in
    // order, nothing lost.
    hw::FakeAuxKernel kernel(trace, page / 16);
    auto session = hw::AuxSession::Open(attr, 0, {-1}, options, kernel);
    REQUIRE(session);
    REQUIRE((*session)->Enable());
    std::vector<uint8_t> got;
    for (int i = 0; i < 100000 && got.size() < trace.size(); ++i) {
      (*session)->DrainAux(0, got);
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    REQUIRE((*session)->Disable());
    (*session)->DrainAux(0, got);
    CHECK(got == trace);
    std::vector<uint8_t> sideband;
    (*session)->DrainSideband(0, sideband);
    const auto aux = aux_records(sideband);
    REQUIRE(aux.size() == 1);  // at the disable: everything, no flags
    CHECK(aux[0].aux_offset == 0);
    CHECK(aux[0].aux_size == trace.size());
    CHECK(aux[0].flags == 0);
  }
  {
    // Never drained: the area fills, later pieces are lost, each loss an AUX record TRUNCATED.
    hw::FakeAuxKernel kernel(trace, page);
    auto session = hw::AuxSession::Open(attr, 0, {-1}, options, kernel);
    REQUIRE(session);
    REQUIRE((*session)->Enable());
    for (int i = 0; i < 2000 && kernel.Written(1000) < trace.size(); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    REQUIRE((*session)->Disable());
    std::vector<uint8_t> got;
    CHECK((*session)->DrainAux(0, got) == page * 4);
    CHECK(std::equal(got.begin(), got.end(), trace.begin()));  // the first four pages
    std::vector<uint8_t> sideband;
    (*session)->DrainSideband(0, sideband);
    const auto aux = aux_records(sideband);
    REQUIRE(!aux.empty());
    CHECK(aux[0].aux_size == page * 4);
    CHECK((aux[0].flags & PERF_AUX_FLAG_TRUNCATED) != 0);
    CHECK(std::all_of(aux.begin(), aux.end(), [](const auto& a) {
      return (a.flags & PERF_AUX_FLAG_TRUNCATED) != 0;
    }));
  }
}
