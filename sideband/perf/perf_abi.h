#pragma once
// The perf.data ABI in one place: record types, feature-section ids, sample_type bits and the
// names perf prints for them (PERF_RECORD_MMAP2, ...). Written from the kernel's uapi
// linux/perf_event.h and perf's perf.data-file-format.txt. Files are little-endian.
#include <cstdint>
#include <string>
#include <vector>

namespace ptprof::perf {

// Record types: 1..31 come from the kernel, 64.. are written by the perf tool.
enum RecordType : uint32_t {
  kRecordMmap = 1,
  kRecordLost = 2,
  kRecordComm = 3,
  kRecordExit = 4,
  kRecordThrottle = 5,
  kRecordUnthrottle = 6,
  kRecordFork = 7,
  kRecordRead = 8,
  kRecordSample = 9,
  kRecordMmap2 = 10,
  kRecordAux = 11,
  kRecordItraceStart = 12,
  kRecordLostSamples = 13,
  kRecordSwitch = 14,
  kRecordSwitchCpuWide = 15,
  kRecordNamespaces = 16,
  kRecordKsymbol = 17,
  kRecordBpfEvent = 18,
  kRecordCgroup = 19,
  kRecordTextPoke = 20,
  kRecordAuxOutputHwId = 21,
  kRecordHeaderAttr = 64,
  kRecordHeaderEventType = 65,
  kRecordHeaderTracingData = 66,
  kRecordHeaderBuildId = 67,
  kRecordFinishedRound = 68,
  kRecordIdIndex = 69,
  kRecordAuxtraceInfo = 70,
  kRecordAuxtrace = 71,
  kRecordAuxtraceError = 72,
  kRecordThreadMap = 73,
  kRecordCpuMap = 74,
  kRecordStatConfig = 75,
  kRecordStat = 76,
  kRecordStatRound = 77,
  kRecordEventUpdate = 78,
  kRecordTimeConv = 79,
  kRecordHeaderFeature = 80,
  kRecordCompressed = 81,
  kRecordFinishedInit = 82,
  kRecordCompressed2 = 83,  // COMPRESSED with an explicit data size (perf 6.13+)
};

// "PERF_RECORD_MMAP2" for known types, "PERF_RECORD_UNKNOWN(123)" otherwise.
std::string RecordTypeName(uint32_t type);
bool IsKnownRecordType(uint32_t type);

// header.misc bits.
inline constexpr uint16_t kMiscCpumodeMask = 0x7;
inline constexpr uint16_t kMiscMmapData = 1u << 13;
inline constexpr uint16_t kMiscCommExec = 1u << 13;
inline constexpr uint16_t kMiscSwitchOut = 1u << 13;
inline constexpr uint16_t kMiscSwitchOutPreempt = 1u << 14;
inline constexpr uint16_t kMiscMmapBuildId = 1u << 14;
inline constexpr uint16_t kMiscBuildIdSize = 1u << 15;  // in HEADER_BUILD_ID records

// Feature sections (bits of the file header's feature bitmap).
enum FeatureId : int {
  kFeatTracingData = 1,
  kFeatBuildId = 2,
  kFeatHostname = 3,
  kFeatOsRelease = 4,
  kFeatVersion = 5,
  kFeatArch = 6,
  kFeatNrCpus = 7,
  kFeatCpuDesc = 8,
  kFeatCpuId = 9,
  kFeatTotalMem = 10,
  kFeatCmdline = 11,
  kFeatEventDesc = 12,
  kFeatCpuTopology = 13,
  kFeatNumaTopology = 14,
  kFeatBranchStack = 15,
  kFeatPmuMappings = 16,
  kFeatGroupDesc = 17,
  kFeatAuxtrace = 18,
  kFeatStat = 19,
  kFeatCache = 20,
  kFeatSampleTime = 21,
  kFeatMemTopology = 22,
  kFeatClockId = 23,
  kFeatDirFormat = 24,
  kFeatBpfProgInfo = 25,
  kFeatBpfBtf = 26,
  kFeatCompressed = 27,
  kFeatCpuPmuCaps = 28,
  kFeatClockData = 29,
  kFeatHybridTopology = 30,
  kFeatPmuCaps = 31,
};
inline constexpr int kFeatureBits = 256;

// "hostname", "build_id", ... or "feature(N)" for ids ptprof does not know.
std::string FeatureName(int id);

// sample_type bits.
enum SampleBit : uint64_t {
  kSampleIp = 1u << 0,
  kSampleTid = 1u << 1,
  kSampleTime = 1u << 2,
  kSampleAddr = 1u << 3,
  kSampleRead = 1u << 4,
  kSampleCallchain = 1u << 5,
  kSampleId = 1u << 6,
  kSampleCpu = 1u << 7,
  kSamplePeriod = 1u << 8,
  kSampleStreamId = 1u << 9,
  kSampleRaw = 1u << 10,
  kSampleBranchStack = 1u << 11,
  kSampleRegsUser = 1u << 12,
  kSampleStackUser = 1u << 13,
  kSampleWeight = 1u << 14,
  kSampleDataSrc = 1u << 15,
  kSampleIdentifier = 1u << 16,
  kSampleTransaction = 1u << 17,
  kSampleRegsIntr = 1u << 18,
  kSamplePhysAddr = 1u << 19,
  kSampleAux = 1u << 20,
  kSampleCgroup = 1u << 21,
  kSampleDataPageSize = 1u << 22,
  kSampleCodePageSize = 1u << 23,
  kSampleWeightStruct = 1u << 24,
};

// "IP|TID|TIME|..." in bit order; unknown bits as "bitN".
std::string SampleTypeNames(uint64_t sample_type);

// read_format bits.
inline constexpr uint64_t kReadTotalTimeEnabled = 1u << 0;
inline constexpr uint64_t kReadTotalTimeRunning = 1u << 1;
inline constexpr uint64_t kReadId = 1u << 2;
inline constexpr uint64_t kReadGroup = 1u << 3;
inline constexpr uint64_t kReadLost = 1u << 4;

// branch_sample_type bit that adds hw_idx to a sample's branch stack.
inline constexpr uint64_t kBranchHwIndex = 1u << 17;

// PERF_RECORD_AUX flags.
inline constexpr uint64_t kAuxFlagTruncated = 0x01;
inline constexpr uint64_t kAuxFlagOverwrite = 0x02;
inline constexpr uint64_t kAuxFlagPartial = 0x04;
inline constexpr uint64_t kAuxFlagCollision = 0x08;
inline constexpr uint64_t kAuxFlagPmuFormatMask = 0xff00;
inline constexpr uint64_t kAuxFlagCoreSightRaw = 0x100;  // cs_etm: unformatted trace

// "truncated|partial" (empty for 0); PMU-specific bits as "pmu_format=0x100".
std::string AuxFlagNames(uint64_t flags);

// attr.type values below PERF_TYPE_MAX and their names ("hardware", ...); others come from the
// pmu_mappings feature.
std::string GenericPmuName(uint32_t type);

// Magic numbers of the two file layouts.
inline constexpr uint64_t kMagicPerfFile2 = 0x32454c4946524550ULL;  // "PERFILE2"
inline constexpr uint64_t kMagicPerfFile2Swapped = 0x50455246494c4532ULL;
inline constexpr uint64_t kMagicPerfFile1 = 0x454c494652455050ULL;   // "PERFFILE" (v1)

}  // namespace ptprof::perf
