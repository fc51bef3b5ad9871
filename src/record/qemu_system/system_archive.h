#pragma once
// WriteSystemArchive answers "how does a kernel-lab recording become a .ptar every ptprof command
// reads?": one stream per vCPU (`cpuN`, or `cpuN.snapK` with a snapshot trigger each), the
// executed code as raw images, the workload's ELF (its symbols), and sideband: `kallsyms` (kernel
// symbols, used by decode), `modules`, and `lab_info` (kernel release, tracer, workload pid and
// name, exit status, the plugin's cli/sti/pushf/popf counters, the flow's own counts, the
// syscalls it followed).
#include <cstdint>
#include <string>
#include <vector>

#include "decoders/pt/trace_encoder.h"
#include "src/model/result.h"
#include "src/record/qemu_system/system_recorder.h"

namespace ptprof::record {

struct SystemArchiveOptions {
  std::string output;
  bool force = false;
  std::string tool;                      // "ptprof 0.1.0"
  std::vector<std::string> command;      // the workload and its arguments
  std::string kernel;
  unsigned smp = 1;
  pt::EncoderOptions encoder;
  uint32_t cycles_per_insn = 1;
  std::optional<uint64_t> mtc_period, cyc_threshold;
};

// The text of the lab_info sideband member ("key value" lines).
std::string LabInfoText(const SystemRecording& recording, const SystemArchiveOptions& options);

Status WriteSystemArchive(const SystemRecording& recording, const SystemArchiveOptions& options);

}  // namespace ptprof::record
