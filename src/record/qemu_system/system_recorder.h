#pragma once
// RecordWithQemuSystem answers "what Intel PT trace would a CPU tracing kernel and user mode have
// written while this static program ran on a real Linux kernel?": it builds the lab's initramfs
// (busybox, init script, the workload), boots the kernel under qemu-system-x86_64 with ptprof's
// system plugin (recording starts at the workload's entry point), reads what the guest sent on its
// second serial port (kallsyms, modules, the workload's pid and exit status) and encodes one PT
// stream per vCPU (EncodeVcpu). A guest that does not power off in time is stopped (only the QEMU
// process this started); what was recorded until then is kept. See docs/lab.md.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "src/model/result.h"
#include "src/record/qemu_recorder.h"
#include "src/record/qemu_system/initramfs.h"
#include "src/record/qemu_system/lab_channel.h"
#include "src/record/qemu_system/system_flow.h"

namespace ptprof::record {

struct SystemRecordOptions {
  std::string kernel;                 // the guest kernel (bzImage / vmlinuz)
  std::vector<std::string> argv;      // the static workload and its arguments
  std::string tracer = "nop";         // --guest-tracer
  unsigned smp = 1;
  std::string qemu = "qemu-system-x86_64";
  std::string plugin;                 // empty: FindQemuSystemPlugin()
  std::string busybox = "/bin/busybox";
  std::string work_prefix;            // files: PREFIX.stream, PREFIX.channel, PREFIX.console, ...
  unsigned timeout_seconds = 300;
  SystemFlowOptions flow;
};

struct SystemRecording {
  std::vector<VcpuTrace> vcpus;
  std::vector<CodeRegion> code;
  uint64_t code_conflicts = 0;
  LabChannel channel;
  std::string kallsyms;               // the guest's /proc/kallsyms (text symbols)
  std::map<std::string, std::string> end;  // the plugin's end chunk: counters
  std::string workload_path;          // the workload on this machine
  bool complete = false;              // the guest powered off and the stream ended normally
  std::string note;                   // why not
  uint64_t stream_bytes = 0;
  double run_seconds = 0, encode_seconds = 0;
};

// The system plugin: $PTPROF_QEMU_SYSTEM_PLUGIN, else next to the running executable.
Result<std::string> FindQemuSystemPlugin();

// The default kernel: $PTPROF_LAB_KERNEL, else the one tools/lab/fetch_kernel.sh unpacked into
// $PTPROF_LAB_DIR (default ~/.cache/ptprof/lab).
std::string DefaultLabKernel();

// Where a static, non-PIE x86-64 program starts, and its first code bytes; fails with a one-line
// reason otherwise (not ELF, dynamically linked, position-independent).
struct WorkloadEntry {
  uint64_t address = 0;
  std::vector<uint8_t> bytes;  // up to 16
};
Result<WorkloadEntry> StaticWorkloadEntry(const std::string& path);

// The addresses a static program's loaded segments cover, [lo, hi).
Result<std::pair<uint64_t, uint64_t>> LoadedRange(const std::string& path);

// Facts from the channel's kallsyms; fails when the guest sent none.
Result<KernelFacts> KernelFactsFromChannel(const LabChannel& channel, const std::string& name);

Result<SystemRecording> RecordWithQemuSystem(const SystemRecordOptions& options);

}  // namespace ptprof::record
