#include "src/record/qemu_system/system_archive.h"

#include <map>

#include <fmt/format.h>

#include "sideband/file_bytes.h"
#include "src/archive/archive_writer.h"
#include "src/archive/translated_code.h"
#include "src/archive/manifest.h"
#include "src/archive/provenance.h"

namespace ptprof::record {

namespace {


std::vector<uint8_t> Bytes(const std::string& text) { return {text.begin(), text.end()}; }

}  // namespace

std::string LabInfoText(const SystemRecording& recording, const SystemArchiveOptions& options) {
  std::string text;
  auto line = [&](const std::string& key, const std::string& value) {
    text += key + " " + value + "\n";
  };
  line("kernel", options.kernel);
  for (const auto& [key, value] : recording.channel.values) line(key, value);
  line("smp", std::to_string(options.smp));
  line("workload", recording.workload_path);
  for (const auto& [key, value] : recording.end)
    if (key.rfind("count_", 0) == 0) line("plugin_" + key, value);
  OpcodeCounts total;
  uint64_t insns = 0, kernel = 0, interrupts = 0, faults = 0, unresolved = 0;
  for (const VcpuTrace& vcpu : recording.vcpus) {
    for (int h = 0; h < 2; ++h) {
      total.cli[h] += vcpu.counts.cli[h];
      total.sti[h] += vcpu.counts.sti[h];
      total.pushf[h] += vcpu.counts.pushf[h];
      total.popf[h] += vcpu.counts.popf[h];
    }
    insns += vcpu.insns;
    kernel += vcpu.kernel_insns;
    interrupts += vcpu.interrupts;
    faults += vcpu.faults;
    unresolved += vcpu.unresolved;
  }
  const char* halves[2] = {"user", "kernel"};
  for (int h = 0; h < 2; ++h) {
    line(fmt::format("flow_count_{}_cli", halves[h]), std::to_string(total.cli[h]));
    line(fmt::format("flow_count_{}_sti", halves[h]), std::to_string(total.sti[h]));
    line(fmt::format("flow_count_{}_pushf", halves[h]), std::to_string(total.pushf[h]));
    line(fmt::format("flow_count_{}_popf", halves[h]), std::to_string(total.popf[h]));
  }
  line("insns", std::to_string(insns));
  line("kernel_insns", std::to_string(kernel));
  line("interrupts", std::to_string(interrupts));
  line("faults", std::to_string(faults));
  line("unresolved_async", std::to_string(unresolved));
  line("code_conflicts", std::to_string(recording.code_conflicts));
  for (const VcpuTrace& vcpu : recording.vcpus)
    for (const std::string& at : vcpu.unresolved_at)
      line("unresolved_at", fmt::format("cpu{} {}", vcpu.vcpu, at));
  for (const VcpuTrace& vcpu : recording.vcpus)
    for (const SyscallSpan& span : vcpu.syscalls)
      line("syscall", fmt::format("cpu{} {} {:#x} {} {}", vcpu.vcpu,
                                  span.handler.empty() ? "?" : span.handler, span.user_ip,
                                  span.insns, span.tsc));
  return text;
}

Status WriteSystemArchive(const SystemRecording& recording, const SystemArchiveOptions& options) {
  auto writer = archive::ArchiveWriter::Create(options.output, options.force);
  if (!writer) return tl::unexpected(writer.error());
  archive::Manifest manifest = archive::NewManifest(options.tool, "qemu-system", options.command);
  manifest.pt.nom_freq = options.encoder.cbr;
  if (options.mtc_period) {
    manifest.pt.mtc_freq = static_cast<uint8_t>(*options.mtc_period);
    manifest.pt.cpuid_0x15_eax = 1;
    manifest.pt.cpuid_0x15_ebx = options.encoder.tsc_per_ctc;
  }
  manifest.pt_config["emulated"] = 1;
  manifest.pt_config["os"] = 1;
  manifest.pt_config["usr"] = 1;
  manifest.pt_config["psb_period"] = options.encoder.psb_period;
  manifest.pt_config["tsc"] = options.encoder.emit_tsc ? 1 : 0;
  manifest.pt_config["ret_compression"] = options.encoder.return_compression ? 1 : 0;
  manifest.pt_config["tnt64"] = options.encoder.tnt64 ? 1 : 0;
  manifest.pt_config["cycles_per_insn"] = options.cycles_per_insn;
  if (options.mtc_period) manifest.pt_config["mtc_period"] = *options.mtc_period;
  if (options.cyc_threshold) manifest.pt_config["cyc_threshold"] = *options.cyc_threshold;

  for (const VcpuTrace& vcpu : recording.vcpus) {
    for (size_t k = 0; k < vcpu.snapshots.size(); ++k) {
      const QemuSnapshot& snapshot = vcpu.snapshots[k];
      archive::StreamEntry stream;
      stream.name = fmt::format("cpu{}.snap{}", vcpu.vcpu, k);
      stream.cpu = static_cast<int32_t>(vcpu.vcpu);
      stream.member = "streams/" + stream.name + ".pt";
      if (auto st = writer->Add(stream.member, snapshot.pt); !st) return st;
      manifest.streams.push_back(stream);
      archive::TriggerEntry trigger;
      trigger.kind = "snapshot";
      trigger.label = snapshot.label;
      trigger.stream = stream.name;
      trigger.offset = snapshot.pt.size();
      trigger.tsc = snapshot.tsc;
      manifest.triggers.push_back(trigger);
    }
    if (!vcpu.snapshots.empty()) continue;
    archive::StreamEntry stream;
    stream.name = fmt::format("cpu{}", vcpu.vcpu);
    stream.cpu = static_cast<int32_t>(vcpu.vcpu);
    stream.member = "streams/" + stream.name + ".pt";
    if (auto st = writer->Add(stream.member, vcpu.pt); !st) return st;
    manifest.streams.push_back(stream);
  }
  // The executed code (kernel and user) as QEMU translated it, then the workload's ELF, which
  // covers its own code with the same bytes and adds its symbols.
  if (auto st = archive::AddTranslatedCode(recording.code, kUnknownId, *writer, manifest); !st)
    return st;
  auto elf = ReadFileBytes(recording.workload_path);
  if (!elf) return tl::unexpected(elf.error());
  archive::ImageEntry workload;
  workload.kind = archive::ImageEntry::Kind::kElf;
  workload.path = recording.workload_path;
  workload.size = elf->size();
  workload.member = "images/workload.elf";
  if (auto st = writer->Add(workload.member, *elf); !st) return st;
  manifest.images.push_back(workload);

  std::map<std::string, std::vector<uint8_t>> sideband = {
      {"kallsyms", Bytes(recording.kallsyms)},
      {"lab_info", Bytes(LabInfoText(recording, options))}};
  if (auto it = recording.channel.files.find("modules"); it != recording.channel.files.end())
    sideband["modules"] = it->second;
  for (const auto& [kind, bytes] : sideband) {
    archive::SidebandEntry entry{kind, kind, "sideband/" + kind};
    if (auto st = writer->Add(entry.member, bytes); !st) return st;
    manifest.sideband.push_back(entry);
  }
  return writer->Finish(archive::ManifestToJson(manifest));
}

}  // namespace ptprof::record
