// AuxSession on a machine without PT or CoreSight: the error paths a user meets.
#include "src/record/intel_pt/aux_session.h"

#include <unistd.h>

#include <catch2/catch.hpp>

using namespace ptprof::record::hw;

TEST_CASE("an AUX event of a PMU that does not exist fails naming the event") {
  HwAttr attr;
  attr.attr.size = sizeof attr.attr;
  attr.attr.type = 4242;  // no PMU has this dynamic type
  attr.attr.config = 0x300e601;
  attr.attr.exclude_kernel = 1;
  auto session = AuxSession::Open(attr, getpid(), {-1}, AuxSession::Options{});
  REQUIRE(!session);
  CHECK(session.error().message.find("AUX event type 4242 config 0x300e601 (cpu -1): "
                                     "perf_event_open: ") == 0);
}

TEST_CASE("a PMU without AUX support: the sideband ring maps, the AUX area does not") {
  HwAttr attr;
  attr.attr.size = sizeof attr.attr;
  attr.attr.type = PERF_TYPE_SOFTWARE;
  attr.attr.config = PERF_COUNT_SW_DUMMY;
  attr.attr.exclude_kernel = 1;
  attr.attr.exclude_hv = 1;
  AuxSession::Options options;
  options.data_pages = 4;
  options.aux_pages = 4;
  auto session = AuxSession::Open(attr, getpid(), {-1}, options);
  if (session) {
    WARN("this kernel mapped an AUX area for a software event");
    return;
  }
  const std::string& message = session.error().message;
  INFO(message);
  // Unprivileged hosts may refuse the event itself; otherwise the AUX mapping is what fails.
  CHECK((message.find("cpu -1: mmap of the AUX area (16384 bytes): ") == 0 ||
         message.find("perf_event_open") != std::string::npos));
}
