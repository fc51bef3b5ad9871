#pragma once
// Snapshot answers "what does a CoreSight snapshot directory describe?": its devices (cores with
// their memory dumps, trace sources with their register values), its trace buffers and which
// source writes into which buffer and traces which core. It is read from snapshot.ini, the device
// .ini files it lists and the trace metadata .ini; every error names file, line and key.
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "src/model/result.h"

namespace ptprof::etm {

// One register line of a device's [regs] section: "TRCIDR0(0x078)=0x28000EA1" has name "TRCIDR0".
struct RegisterLine {
  std::string name;
  std::string text;  // the value as written
  std::string where;  // "device_6.ini:9"
};

// A [dumpN] section of a core device: memory contents at an address.
struct MemoryDump {
  std::string file;  // path of the dump file, already joined with the snapshot directory
  uint64_t address = 0;
  uint64_t offset = 0;                 // of the first byte in `file`
  std::optional<uint64_t> length;      // to the end of the file when absent
  std::string space;                   // memory space name ("EL1N", "S", ...), empty for any
  std::string where;                   // "cpu_0.ini:[dump1]"
  // Why the dump cannot be read (its file does not exist), or empty. A snapshot may name dumps
  // it does not ship: their code is then unknown, as for trc_pkt_lister.
  std::string missing;
};

struct SnapshotDevice {
  std::string ini_file;  // the device's .ini path
  std::string name;
  std::string device_class;  // "core", "trace_source", ...
  std::string type;          // "Cortex-A53", "ETM4", "PTM1.1", "STM", ...
  std::vector<RegisterLine> registers;
  std::vector<MemoryDump> dumps;

  // The register line called `name` (case-insensitive, ignoring a "(...)" suffix), or nullptr.
  const RegisterLine* Register(const std::string& name) const;
};

struct TraceBuffer {
  std::string name;
  std::string file;    // joined with the snapshot directory
  std::string format;  // "coresight", "dstream_coresight", "source_data"
  std::string where;   // "trace.ini:[buffer0]"
};

struct Snapshot {
  std::string dir;
  std::vector<SnapshotDevice> devices;
  std::vector<TraceBuffer> buffers;  // in [trace_buffers] order
  std::vector<std::pair<std::string, std::string>> source_buffers;  // source -> buffer
  std::vector<std::pair<std::string, std::string>> core_sources;    // core -> source
  std::vector<std::string> warnings;  // entries that were ignored, with file and line

  const SnapshotDevice* Device(const std::string& name) const;
  const TraceBuffer* Buffer(const std::string& name) const;
  // The core a source traces, or "" for a source without a core (STM, ITM).
  std::string CoreOf(const std::string& source) const;
  // The sources that write into `buffer`, sorted by name.
  std::vector<std::string> SourcesOf(const std::string& buffer) const;
};

// Reads the snapshot in directory `dir`. Missing or malformed files, sections and keys are
// errors naming the file, line and key; trace and dump files are checked to exist.
Result<Snapshot> LoadSnapshot(const std::string& dir);

// The number in a register or address text ("0x1F", "31"), or an error naming where and what.
Result<uint64_t> ParseNumber(const std::string& text, const std::string& where,
                             const std::string& what);

}  // namespace ptprof::etm
