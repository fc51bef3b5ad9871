#pragma once
// Manifest answers "what was recorded, how, and which member holds each piece?": the description
// of a trace session that a .ptar carries next to its members. One format serves every input
// ptprof archives: a raw PT trace (one stream called "raw", images from --elf/--raw) as well as a
// perf.data session (streams "cpu0", "cpu1", ... or "tid1234", sideband records, images found by
// build-id in several processes, the perf clock), so that a new input kind needs no format change.
// The JSON spelling of every field is documented in docs/formats/ptar.md.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "decoders/pt/pt_params.h"
#include "src/archive/ptar_format.h"
#include "src/model/result.h"
#include "src/model/trace_event.h"

namespace ptprof::archive {

// One trace buffer: a raw PT file, or one CPU's or one thread's AUX data.
struct StreamEntry {
  std::string name;                // "raw", "cpu0", "tid1234": unique in the archive
  std::string format = "intel_pt"; // the decoder it needs ("intel_pt"; "cs_etm" later)
  int32_t cpu = kUnknownId;
  int32_t pid = kUnknownId;
  int32_t tid = kUnknownId;
  std::string member;
};

// One binary the trace executes, and where its bytes are in the archive.
struct ImageEntry {
  enum class Kind { kElf, kRaw };
  Kind kind = Kind::kElf;
  std::string path;            // where the binary was on the recording machine
  std::string build_id;        // GNU build-id (hex); empty when the file has none
  uint64_t base = 0;           // elf: --elf FILE:BASE (0: the link-time addresses)
  uint64_t address = 0;        // raw: the address of the first byte
  uint64_t file_offset = 0;    // raw: where the bytes were in the original file
  uint64_t member_offset = 0;  // raw: where the bytes are in the member (several mappings of one
                               // file can share a member holding the whole file)
  uint64_t size = 0;           // elf: bytes of the file; raw: bytes loaded
  int32_t pid = kUnknownId;    // the process that maps it (perf.data); unknown: every process
  uint64_t time_ns = kUnknownTime;  // when it was mapped (perf.data); unknown: from the start
  std::string member;
};

// Non-trace data the decode may need: "kallsyms" (kernel symbols), "perf_records" (the
// sideband records of a perf.data session: mmaps, comm, switches, ...).
struct SidebandEntry {
  std::string kind;
  std::string name;
  std::string member;
};

// A trigger or snapshot boundary noted while recording.
struct TriggerEntry {
  std::string kind = "trigger";  // "trigger" or "snapshot"
  std::string label;
  std::string stream;            // the stream it refers to, or empty for all
  uint64_t offset = 0;           // byte offset in that stream
  uint64_t tsc = kUnknownTime;
  uint64_t time_ns = kUnknownTime;
  uint64_t tid = kUnknownTime;         // the thread the trigger fired for, when known
  uint64_t latency_ns = kUnknownTime;  // syscall-latency triggers: how long the syscall took
};

// perf's TSC <-> perf-time conversion (the kernel's cap_user_time parameters).
struct ClockEntry {
  uint16_t time_shift = 0;
  uint32_t time_mult = 0;
  uint64_t time_zero = 0;
};

struct SourceEntry {
  std::string kind;                 // "raw_pt", "perf_data", ...
  std::vector<std::string> paths;   // the input files as given
  std::string host;                 // the machine the archive was made on
};

struct Manifest {
  std::string tool;     // "ptprof 0.1.0"
  std::string created;  // UTC, ISO 8601
  SourceEntry source;
  pt::PtParams pt;      // recording CPU, timing parameters, address filters
  std::map<std::string, uint64_t> pt_config;  // recording configuration (perf attr.config bits,
                                              // psb_period, ...) by name
  std::optional<ClockEntry> clock;
  std::vector<StreamEntry> streams;
  std::vector<ImageEntry> images;  // in load order: a later image hides what it overlaps
  std::vector<SidebandEntry> sideband;
  std::vector<TriggerEntry> triggers;
};

const char* ImageKindName(ImageEntry::Kind kind);

// The manifest as JSON, without the container's own fields ("format", "format_version",
// "members": the writer adds them).
nlohmann::ordered_json ManifestToJson(const Manifest& manifest);

// Parses a manifest. Errors name the field ("field 'streams[0].member': expected a string").
// Unknown fields are ignored, so that later versions can add fields.
Result<Manifest> ManifestFromJson(const nlohmann::ordered_json& json);

// Every member a manifest names must be in the archive's members table.
Status CheckMembersExist(const Manifest& manifest, const std::vector<MemberInfo>& members);

}  // namespace ptprof::archive
