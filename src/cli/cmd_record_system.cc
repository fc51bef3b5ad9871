// ptprof record --backend qemu-system: boots the lab kernel under qemu-system-x86_64 with the
// system plugin, runs the static workload, and writes one kernel+user PT stream per vCPU with the
// code, the workload's ELF, kallsyms and the lab's facts into a .ptar. See docs/lab.md.
#include "src/cli/cmd_record_system.h"

#include <unistd.h>

#include <cstdio>
#include <optional>

#include <fmt/format.h>

#include "src/cli/command.h"
#include "src/record/qemu_system/system_archive.h"
#include "src/record/qemu_system/system_recorder.h"
#include "src/record/triggers/trigger_engine.h"

namespace ptprof::cli {

namespace {

// --snapshot-on for the kernel lab: syscall=, syscall-latency>, addr= (kernel or workload
// symbols) and every= triggers, through the trigger engine (src/record/triggers), all in the
// guest's emulated time. The vCPUs' streams are encoded after the guest powered off, so nothing
// links a signal sent to ptprof to a point in them: signal= is refused.
Status CheckSystemTriggers(const RecordSystemRequest& request, record::SystemFlowOptions& flow) {
  namespace tr = record::triggers;
  for (const tr::TriggerSpec& spec : request.policy.triggers)
    if (spec.kind != tr::TriggerKind::kSyscall && spec.kind != tr::TriggerKind::kSyscallLatency &&
        spec.kind != tr::TriggerKind::kAddress && spec.kind != tr::TriggerKind::kEvery)
      return Fail("--snapshot-on '" + spec.text + "': the qemu-system backend observes syscall=, "
                  "syscall-latency>, addr= and every= triggers (signal= and insns= work with "
                  "--backend qemu)");
  if (!request.policy.triggers.empty())
    flow.buffer_size = request.policy.pre_bytes ? request.policy.pre_bytes : request.buffer_size;
  return {};
}

}  // namespace

int RunRecordSystem(const RecordSystemRequest& request) {
  if (request.command.empty()) return ReportBadInput("record: no workload given (-- CMD ARGS)");
  if (!request.force && access(request.output.c_str(), F_OK) == 0)
    return ReportBadInput(request.output + ": exists (use --force to replace it)");
  if (request.tracer != "nop" && request.tracer != "function" && request.tracer != "function_graph")
    return ReportBadInput("record: --guest-tracer " + request.tracer +
                          ": expected nop, function or function_graph");
  record::SystemRecordOptions options;
  options.kernel = request.kernel.empty() ? record::DefaultLabKernel() : request.kernel;
  options.argv = request.command;
  options.tracer = request.tracer;
  options.smp = request.smp;
  options.timeout_seconds = request.timeout_seconds;
  if (!request.qemu.empty()) options.qemu = request.qemu;
  options.plugin = request.plugin;
  options.work_prefix = request.output;
  options.flow.encoder = request.encoder;
  options.flow.cycles_per_insn = request.cycles_per_insn;
  if (auto st = CheckSystemTriggers(request, options.flow); !st) {
    std::fprintf(stderr, "ptprof: record: %s\n", st.error().message.c_str());
    return kExitUsage;
  }
  std::optional<record::triggers::TriggerEngine> engine;
  if (!request.policy.triggers.empty()) {
    engine.emplace(request.policy);
    options.flow.triggers = &*engine;
  }
  const std::string stream = request.output + ".stream", channel = request.output + ".channel";
  auto recording = record::RecordWithQemuSystem(options);
  if (!recording) {
    return ReportBadInput("record: " + recording.error().message + " (the guest's console: " +
                          request.output + ".console)");
  }
  record::SystemArchiveOptions archive;
  archive.output = request.output;
  archive.force = request.force;
  archive.tool = std::string("ptprof ") + PTPROF_VERSION;
  archive.command = request.command;
  archive.kernel = options.kernel;
  archive.smp = request.smp;
  archive.encoder = request.encoder;
  archive.cycles_per_insn = request.cycles_per_insn;
  archive.mtc_period = request.mtc_period;
  archive.cyc_threshold = request.cyc_threshold;
  if (auto st = record::WriteSystemArchive(*recording, archive); !st)
    return ReportBadInput("record: " + st.error().message);
  if (!request.keep_stream) {
    std::remove(stream.c_str());
    std::remove(channel.c_str());
    std::remove((request.output + ".qemu-log").c_str());
    if (recording->complete) std::remove((request.output + ".console").c_str());
  }
  if (!request.quiet) {
    uint64_t insns = 0, kernel = 0, bytes = 0, interrupts = 0, faults = 0, syscalls = 0;
    for (const auto& v : recording->vcpus) {
      insns += v.insns;
      kernel += v.kernel_insns;
      for (const auto& s : v.snapshots) bytes += s.pt.size();
      bytes += v.pt.size();
      interrupts += v.interrupts;
      faults += v.faults;
      syscalls += v.syscalls.size();
    }
    std::fprintf(stderr,
                 "ptprof: record: kernel %s, tracer %s, %zu vCPU(s): %llu instructions (%llu "
                 "kernel), %llu syscalls, %llu interrupts, %llu faults, %llu bytes of PT "
                 "(%.3f bytes/insn); workload exit %s; wrote %s\n",
                 recording->channel.Value("uname").value_or("?").c_str(),
                 recording->channel.Value("tracer").value_or("?").c_str(),
                 recording->vcpus.size(), static_cast<unsigned long long>(insns),
                 static_cast<unsigned long long>(kernel), static_cast<unsigned long long>(syscalls),
                 static_cast<unsigned long long>(interrupts),
                 static_cast<unsigned long long>(faults), static_cast<unsigned long long>(bytes),
                 insns ? static_cast<double>(bytes) / static_cast<double>(insns) : 0.0,
                 recording->channel.Value("workload_exit").value_or("?").c_str(),
                 request.output.c_str());
    std::fprintf(stderr, "ptprof: record: QEMU (boot, workload, power-off) %.1f s, stream %llu "
                         "bytes, encoding %.2f s\n",
                 recording->run_seconds, static_cast<unsigned long long>(recording->stream_bytes),
                 recording->encode_seconds);
  }
  if (!recording->complete)
    return ReportBadInput("record: " + request.output + " holds the trace up to the failure: " +
                          recording->note + " (the guest's console: " + request.output +
                          ".console)");
  return kExitOk;
}

}  // namespace ptprof::cli
