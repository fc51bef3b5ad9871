#include "sideband/perf/perf_abi.h"

#include <catch2/catch.hpp>

using namespace ptprof::perf;

TEST_CASE("perf ABI names are perf's names") {
  CHECK(RecordTypeName(kRecordMmap2) == "PERF_RECORD_MMAP2");
  CHECK(RecordTypeName(kRecordSwitchCpuWide) == "PERF_RECORD_SWITCH_CPU_WIDE");
  CHECK(RecordTypeName(kRecordAuxtraceInfo) == "PERF_RECORD_AUXTRACE_INFO");
  CHECK(RecordTypeName(200) == "PERF_RECORD_UNKNOWN(200)");
  CHECK_FALSE(IsKnownRecordType(200));
  CHECK(FeatureName(kFeatPmuMappings) == "pmu_mappings");
  CHECK(FeatureName(129) == "feature(129)");
  CHECK(SampleTypeNames(kSampleIp | kSampleTid | kSampleIdentifier) == "IP|TID|IDENTIFIER");
  CHECK(SampleTypeNames(uint64_t{1} << 40) == "bit40");
  CHECK(AuxFlagNames(kAuxFlagTruncated | kAuxFlagCollision) == "truncated|collision");
  CHECK(AuxFlagNames(kAuxFlagCoreSightRaw) == "pmu_format=0x100");
  CHECK(AuxFlagNames(0) == "");
  CHECK(GenericPmuName(1) == "software");
  CHECK(GenericPmuName(8) == "");
}
