#pragma once
// PeventOptions answers "which perf sideband files did the user give, and how should they be read
// and shown?" for the libipt-compatible modes (ptdump's and ptxed's --pevent:* and --sb:*
// options). Options are read left to right as libipt's tools read them: a file takes the
// --pevent:sample-type/time-*/... values given before it. No libipt types here.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sideband/image_spec.h"
#include "sideband/perf/perf_clock.h"
#include "src/model/result.h"

namespace ptprof::pt {

// How one sideband file is read (libipt's struct pt_sb_pevent_config, minus the file).
struct PeventConfig {
  uint64_t sample_type = 0;          // perf_event_attr.sample_type of the records
  perf::PerfClock clock{0, 1, 0};    // perf time -> TSC (time_shift, time_mult, time_zero)
  uint64_t tsc_offset = 0;           // apply records this many ticks earlier
  uint64_t kernel_start = UINT64_MAX;  // IPs at or above are kernel code
  std::string sysroot;               // prefix of mmapped file names
  std::string vdso_x64, vdso_x32, vdso_ia32;  // files standing in for [vdso]
};

struct PeventFile {
  FileRangeSpec range;  // the file and the byte range holding the records
  bool primary = true;  // the primary file drives context switches (ptxed)
  PeventConfig config;  // as of this file's option
};

// What --sb:compact/verbose/filename/offset/time ask to print on each record.
struct SidebandPrintFlags {
  bool compact = false;
  bool verbose = false;
  bool filename = false;
  bool offset = false;
  bool time = false;
  bool any() const { return compact || verbose || filename || offset || time; }
};

struct SidebandRequest {
  std::vector<PeventFile> files;
  SidebandPrintFlags print;
  bool warn = false;          // --sb:warn: print warnings, not only errors
  bool print_switch = false;  // --sb:switch (ptxed): print "[context: pid-N]" on switches
  std::vector<std::string> kcore;  // --pevent:kcore FILE[:BASE] (ptxed): kernel image
  PeventConfig next;          // the configuration the next file gets
};

// Which tool's spelling to accept: ptdump accepts "--pevent" and ignores the image options
// (sysroot, kcore, vdso-*); ptxed knows "--sb:switch" and uses them.
enum class SidebandTool { kPtdump, kPtxed };

// If args[i] is a sideband option, consumes it (and its value, advancing i) into `request` and
// returns true; returns false for other options. Fails with a one-line message naming the option
// on a missing or bad value.
Result<bool> ParseSidebandOption(const std::vector<std::string>& args, size_t& i, SidebandTool tool,
                                 SidebandRequest& request);

// The help lines for the sideband options of `tool`.
std::string SidebandHelp(SidebandTool tool);

}  // namespace ptprof::pt
