#pragma once
// PerfDataSession answers "what is there to decode in this perf.data, and with what?": one session
// stream per AUX stream (named as the reader names them: cpu0, tid1234, ...), the PT parameters
// taken from the file alone (CPU from the cpuid feature, MTC frequency from the event's config,
// nominal frequency and TSC:CTC ratio from AUXTRACE_INFO), and the binaries its executable
// mappings name, found under --symfs, in a perf build-id cache or at their recorded path (or, for
// a file of bare bytes as `export --perf-data --images-dir` writes, loaded as a raw image).
//
// The session's `tasks` (SessionTasks) say which task runs on each stream when and which images
// its process maps at that time (mmaps, exec, fork, exit; the kernel's mappings in every process),
// so that the decoder switches to the code of the process that runs. `images` holds every loaded
// image once, for symbols and for archiving.
#include <string>
#include <vector>

#include "decoders/pt/pt_params.h"
#include "sideband/perf/perf_data.h"
#include "src/model/result.h"
#include "src/pipeline/session.h"

namespace ptprof {

// The PT parameters of the file's intel_pt event; notes what the file could not say (an address
// filter string it cannot resolve to addresses yet) in `notes`.
pt::PtParams PtParamsFromPerfData(const perf::PerfData& data, std::vector<std::string>* notes);

// Where the binary recorded as `path` with `build_id` ("" when unknown) is on this machine, or ""
// when it is not: under `symfs` (when given), in the build-id cache `buildid_dir` (perf's
// ~/.debug layout: .build-id/xx/rest[/elf] and <path>/<build-id>[/elf]), then at `path` itself.
// A candidate whose own build-id differs from a known `build_id` is not the binary.
std::string FindBinary(const std::string& path, const std::string& build_id,
                       const std::string& symfs, const std::string& buildid_dir);

// A session over a parsed perf.data. Fails (naming the file) when it holds no intel_pt AUX data.
// Binaries that cannot be found are listed once each in session.warnings.
Result<Session> SessionFromPerfData(perf::PerfData data, const std::string& path,
                                    const RawInputOptions& options);

// Reads a perf.data (file or pipe mode) and opens it as a session.
Result<Session> OpenPerfDataSession(const std::string& path, const RawInputOptions& options);

}  // namespace ptprof
