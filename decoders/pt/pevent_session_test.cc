#include "decoders/pt/pevent_session.h"

#include <cstring>

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "decoders/pt/flow_testing.h"
#include "decoders/pt/image_cache.h"
#include "decoders/pt/pevent_test_records.h"

using namespace ptprof;
using namespace ptprof::pt;
using namespace ptprof::pt::testing;

namespace {

pt_event Event(pt_event_type type, uint64_t tsc, uint64_t ip, bool suppressed = false) {
  pt_event event;
  std::memset(&event, 0, sizeof event);
  event.type = type;
  event.tsc = tsc;
  event.ip_suppressed = suppressed;
  switch (type) {
    case ptev_enabled: event.variant.enabled.ip = ip; break;
    case ptev_disabled: event.variant.disabled.ip = ip; break;
    case ptev_tick: event.variant.tick.ip = ip; break;
    default: break;
  }
  return event;
}

std::string NameOf(pt_image* image) { return image ? pt_image_name(image) : "(none)"; }

struct Fixture {
  Fixture(const std::vector<uint8_t>& records, uint64_t sample_type, SidebandRequest request) {
    std::vector<PeventSource> sources;
    sources.push_back(SourceOf(records, sample_type, "p.sb"));
    session = std::make_unique<PeventSession>(PeventQueue(std::move(sources)), request, cache.iscache(),
                                              [this](std::string_view text) { out += text; });
  }
  PtImageCache cache;
  std::string out;
  std::unique_ptr<PeventSession> session;
};

}  // namespace

TEST_CASE("itrace-start switches at once; a later switch-in waits for the kernel") {
  TempFile code({0x90, 0x90, 0xf4});
  const uint64_t tid_time = perf::kSampleTid | perf::kSampleTime;
  const auto records = Concat({Mmap(1, 0x1000, 3, 0, code.path(), {1, 0}), Mmap(2, 0x2000, 3, 0, code.path(), {2, 0}),
                               ItraceStart(1, {1, 0}), Switch(true, {1, 2}), Switch(false, {2, 3})});
  SidebandRequest request;
  request.print.compact = true;
  request.print_switch = true;
  Fixture f(records, tid_time, request);

  CHECK(NameOf(f.session->OnEvent(Event(ptev_enabled, 1, 0x1000))) == "pid-1");
  CHECK(f.out.find("PERF_RECORD_ITRACE_START  1/1  { 1/1 0 }\n[context: pid-1]\n") != std::string::npos);
  CHECK(f.out.find("SWITCH") == std::string::npos);  // not due yet
  f.out.clear();
  // In user space, with the switch-in due: it waits.
  CHECK(f.session->OnEvent(Event(ptev_tick, 4, 0x1001)) == nullptr);
  CHECK(f.out == "PERF_RECORD_SWITCH.OUT  { 1/1 2 }\nPERF_RECORD_SWITCH.IN  { 2/2 3 }\n");
  f.out.clear();
  // Tracing stops at an unknown IP from user space: likely in the kernel, so the switch happens.
  CHECK(NameOf(f.session->OnEvent(Event(ptev_disabled, 4, 0, true))) == "pid-2");
  CHECK(f.out == "[context: pid-2]\n");
  CHECK(f.session->OnEvent(Event(ptev_enabled, 5, 0x2000)) == nullptr);
}

TEST_CASE("exec gives the process a new image, used from the next kernel entry") {
  TempFile code({0x90, 0x90, 0xf4});
  const auto records = Concat({Mmap(1, 0x1000, 3, 0, code.path(), {std::nullopt, 0}),
                               ItraceStart(1, {std::nullopt, 0}), CommExec(1, "foo", {std::nullopt, 2}),
                               Mmap(1, 0x2000, 3, 0, code.path(), {std::nullopt, 2})});
  Fixture f(records, perf::kSampleTime, SidebandRequest{});
  pt_image* first = f.session->OnEvent(Event(ptev_enabled, 1, 0x1000));
  REQUIRE(first);
  CHECK(f.session->OnEvent(Event(ptev_disabled, 1, 0, true)) == nullptr);
  pt_image* second = f.session->OnEvent(Event(ptev_enabled, 3, 0x2000));
  REQUIRE(second);
  CHECK(second != first);
  CHECK(NameOf(second) == "pid-1");
  CHECK(f.out.empty());  // nothing asked to be shown
}

TEST_CASE("losses and unusable mappings are reported at their record; errors even without --sb:warn") {
  const auto records = Concat({Aux(0, 0x200, perf::kAuxFlagTruncated, {std::nullopt, 0}),
                               Lost(1, 0x100, {std::nullopt, 0}),
                               Mmap(1, 0xb000, 0x1000, 0, "//anon", {std::nullopt, 0}),
                               Mmap(1, 0xa000, 0x1000, 0, "[vdso]", {std::nullopt, 0})});
  const uint64_t aux = Aux(0, 0x200, 1, {std::nullopt, 0}).size();
  const uint64_t lost = Lost(1, 0x100, {std::nullopt, 0}).size();
  const uint64_t anon = Mmap(1, 0xb000, 0x1000, 0, "//anon", {std::nullopt, 0}).size();
  SidebandRequest quiet;
  Fixture f(records, perf::kSampleTime, quiet);
  CHECK(f.session->OnEvent(Event(ptev_enabled, 1, 0x1000)) == nullptr);
  CHECK(f.out == fmt::format("[p.sb:{:016x} sideband error: bad configuration]\n", aux + lost + anon));

  SidebandRequest warn;
  warn.warn = true;
  Fixture g(records, perf::kSampleTime, warn);
  g.session->OnEvent(Event(ptev_enabled, 1, 0x1000));
  CHECK(g.out == fmt::format("[p.sb:0000000000000000 sideband warning: trace lost]\n"
                             "[p.sb:{:016x} sideband warning: sideband lost]\n"
                             "[p.sb:{:016x} sideband warning: image section lost]\n"
                             "[p.sb:{:016x} sideband error: bad configuration]\n",
                             aux, aux + lost, aux + lost + anon));
}
