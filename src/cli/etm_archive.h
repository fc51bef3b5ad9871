#pragma once
// EtmArchive answers "how does a CoreSight input become a self-contained .ptar, and back into the
// files the ETM decoders read?". A snapshot directory is stored file by file (snapshot.ini, the
// device .ini files, the trace metadata, the trace buffers and the [dump] memory files) as
// "coresight_file" sideband members named by their path in the directory; a cs_etm perf.data is
// stored whole ("perf_data" sideband member) with the binaries its executable mmaps name (found
// as decode finds them: --symfs, build-id cache, path) as ELF images. Restoring writes them into
// a private temporary directory in the same layout (binaries under a symfs root), so that the
// existing decoders read them unchanged. docs/formats/ptar.md spells the manifest.
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "src/archive/manifest.h"

#include "src/model/result.h"
#include "src/pipeline/session.h"

namespace ptprof::cli {

inline constexpr char kCoreSightSnapshotSource[] = "coresight-snapshot";
inline constexpr char kCsEtmPerfDataSource[] = "cs_etm-perf-data";

struct EtmArchiveOptions {
  std::string output;
  bool force = false;
  std::string tool;         // "ptprof 0.1.0"
  std::string symfs;        // perf.data: where its binaries are (as for decode)
  std::string buildid_dir;
  // What a recorder knows (record --backend cs_etm): each snapshot's trigger, and parameters
  // for the manifest's pt_config.
  std::vector<archive::TriggerEntry> triggers;
  std::map<std::string, uint64_t> parameters;
  std::vector<std::string> source_paths;  // the manifest's source paths (default: the input)
};

// What an archive of a CoreSight input holds, for the summary line.
struct EtmArchiveSummary {
  size_t files = 0;     // snapshot files, or 1 (the perf.data)
  size_t binaries = 0;  // perf.data: binaries stored
  size_t missing = 0;   // perf.data: binaries not found (each warned about on stderr)
};

// Archives the snapshot directory `dir`. Errors name the file.
Result<EtmArchiveSummary> WriteSnapshotArchive(const std::string& dir, const EtmArchiveOptions& options);

// True when `path` is a perf.data holding cs_etm AUXTRACE_INFO.
bool IsCsEtmPerfData(const std::string& path);

// Archives the cs_etm perf.data `path` with the binaries of its executable mmaps.
Result<EtmArchiveSummary> WritePerfEtmArchive(const std::string& path, const EtmArchiveOptions& options);

// A CoreSight input restored from a .ptar.
struct RestoredEtmInput {
  std::string kind;   // kCoreSightSnapshotSource or kCsEtmPerfDataSource
  std::string path;   // the snapshot directory or the perf.data, in `files`
  std::string symfs;  // perf.data: the root its binaries are under
  std::shared_ptr<ExtractedFiles> files;
  archive::Manifest manifest;  // triggers and parameters a recorder stored
};

// nullopt when `path` is a .ptar of some other input; else its CoreSight input with every member
// verified (a damaged member is one error naming the archive and the member).
Result<std::optional<RestoredEtmInput>> RestoreEtmArchive(const std::string& path);

}  // namespace ptprof::cli
