#pragma once
// SourceConfig answers "how must this trace source be decoded?": its protocol, the register values
// the decoder needs (with the documented defaults for optional ones), the architecture and profile
// of the core it traces, and its CoreSight trace ID. It is derived from snapshot devices and holds
// no OpenCSD types, so that it can be built and checked without the library.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "decoders/etm/snapshot.h"
#include "src/model/result.h"

namespace ptprof::etm {

enum class Protocol { kEtmV3, kPtm, kEtmV4, kEte, kStm };
const char* ProtocolName(Protocol protocol);

enum class ArchVersion { kUnknown, kV7, kV8, kV8r3, kAA64 };
enum class CoreProfile { kUnknown, kA, kR, kM };

struct ArchProfile {
  ArchVersion arch = ArchVersion::kUnknown;
  CoreProfile profile = CoreProfile::kUnknown;
};

// The architecture of a core named like a snapshot's core type ("Cortex-A57", "ARMv8.2-A",
// "ARM-AA64"); arch is kUnknown for names it does not know.
ArchProfile ArchProfileOf(const std::string& core_type);

struct SourceConfig {
  std::string source;     // device name, e.g. "ETM_0"
  std::string core;       // core device name, or "" (STM)
  int cpu = -1;           // the core's number (trailing digits of its name), -1 without a core
  Protocol protocol = Protocol::kEtmV4;
  ArchProfile arch;
  uint8_t trace_id = 0;
  std::map<std::string, uint32_t> registers;  // upper-case register name -> value

  uint32_t Reg(const std::string& name) const;
};

// The configuration of `source` from its device and its core's device. Unknown protocols, unknown
// core types, missing required registers and unreadable values are errors naming file, line and key.
Result<SourceConfig> ConfigureSource(const Snapshot& snapshot, const std::string& source);

// What a decode of one trace buffer needs: its format and every source that writes into it
// (only the first, by name, for an unformatted "source_data" buffer: it carries one source).
struct BufferPlan {
  TraceBuffer buffer;
  std::vector<SourceConfig> sources;
  std::vector<std::string> skipped;  // sources that cannot be decoded, with the reason
};

// The plan for the buffer called `buffer_name`, or the first buffer when it is empty. Sources
// whose protocol ptprof cannot decode (ITM) are listed in `skipped`; none decodable is an error.
Result<BufferPlan> PlanBuffer(const Snapshot& snapshot, const std::string& buffer_name);

}  // namespace ptprof::etm
