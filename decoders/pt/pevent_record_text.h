#pragma once
// PeventRecordText answers "how does libipt-sb print this sideband record?": the optional file
// name and offset, the optional time, the record in compact ("PERF_RECORD_MMAP  1/1, a000, ...")
// or verbose (one "  field: value" line per field) form, and its sample fields, as libipt 2.0.5's
// ptdump and ptxed show them with --sb:compact/verbose/filename/offset/time.
#include <functional>
#include <string>
#include <string_view>

#include "decoders/pt/pevent_options.h"
#include "decoders/pt/pevent_queue.h"
#include "decoders/pt/pevent_source.h"

namespace ptprof::pt {

// The text for `entry` of file `filename` read with `sample_type`, including the final newline;
// empty when `flags` asks for nothing.
std::string PeventRecordText(const PeventEntry& entry, const std::string& filename, uint64_t sample_type,
                             const SidebandPrintFlags& flags);

// ptdump's sideband listing: prints (through `emit`) and consumes every record due at `tsc`, in
// time order across the files.
void PrintDueRecords(PeventQueue& queue, uint64_t tsc, const SidebandPrintFlags& flags,
                     const std::function<void(std::string_view)>& emit);

}  // namespace ptprof::pt
