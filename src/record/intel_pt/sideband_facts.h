#pragma once
// ReadSidebandFacts answers "what did the kernel say in the AUX events' sideband rings?": the
// records RecordHardware drained, parsed with the events' sample layout, become the executable
// MMAP2s of the command's processes (libraries loaded after the last /proc read included), the
// trace IDs of cs_etm's AUX_OUTPUT_HW_ID records, the data-loss flags of the AUX records, and the
// records a perf.data carries as they are (SWITCH, FORK, EXIT, COMM, MMAP2, LOST, ...). AUX,
// AUX_OUTPUT_HW_ID, ITRACE_START and the traced process's own EXIT stay behind: the writer
// describes the buffers, the trace IDs and the command's start and end itself.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sideband/perf/perf_data_writer.h"
#include "src/record/intel_pt/pmu_sysfs.h"

namespace ptprof::record::hw {

struct SidebandFacts {
  std::vector<perf::PerfMapping> mappings;
  std::map<int, uint64_t> trace_ids;  // cs_etm: AUX_OUTPUT_HW_ID per CPU (Linux 6.4+)
  uint64_t aux_records = 0, truncated = 0, collision = 0;
  std::vector<uint8_t> carried;          // whole records, in ring order
  std::map<std::string, uint64_t> carried_counts;  // record type name -> how many
  std::optional<uint64_t> first_time;    // the earliest sample time among them
  std::string problem;  // the sideband could not be parsed (the mappings then come from /proc only)
};

// `sideband` holds whole records written with `attr`'s sample_type and sample_id_all.
SidebandFacts ReadSidebandFacts(const HwAttr& attr, const std::vector<uint8_t>& sideband,
                                uint32_t traced_pid);

}  // namespace ptprof::record::hw
