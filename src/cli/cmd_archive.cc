// ptprof archive: a self-contained .ptar from a raw PT trace and its images (or from another
// .ptar), so that `ptprof decode X.ptar` gives the same output on a machine without the binaries.
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "decoders/pt/pt_params.h"
#include "src/archive/archive_reader.h"
#include "src/cli/command.h"
#include "src/pipeline/session.h"
#include "src/pipeline/session_archive.h"

namespace ptprof::cli {

namespace {

struct ArchiveOptions {
  std::string input;
  std::string output;
  bool force = false;
  std::vector<std::string> raw;
  std::vector<std::string> elf;
  std::vector<bool> image_order;  // true for --elf, in command-line order
  std::string kallsyms;
  std::vector<std::string> addr_filters;
  std::string cpu;
  std::optional<uint64_t> mtc_freq;
  std::optional<uint64_t> nom_freq;
  std::optional<uint64_t> cpuid_0x15_eax;
  std::optional<uint64_t> cpuid_0x15_ebx;
};

int UsageError(const std::string& message) {
  std::fprintf(stderr, "ptprof: archive: %s\n", message.c_str());
  return kExitUsage;
}

bool HasRawOptions(const ArchiveOptions& o) {
  return !o.raw.empty() || !o.elf.empty() || !o.kallsyms.empty() || !o.cpu.empty() ||
         !o.addr_filters.empty() ||
         o.mtc_freq || o.nom_freq || o.cpuid_0x15_eax || o.cpuid_0x15_ebx;
}

int RunArchive(const ArchiveOptions& options) {
  RawInputOptions raw;
  if (!options.cpu.empty()) {
    if (auto st = pt::ParseCpu(options.cpu, "--cpu", raw.params); !st)
      return UsageError(st.error().message);
  }
  for (const std::string& text : options.addr_filters) {
    if (auto st = pt::ParseAddressFilter(text, raw.params); !st) return UsageError(st.error().message);
  }
  if (options.mtc_freq) raw.params.mtc_freq = static_cast<uint8_t>(*options.mtc_freq);
  if (options.nom_freq) raw.params.nom_freq = static_cast<uint8_t>(*options.nom_freq);
  if (options.cpuid_0x15_eax)
    raw.params.cpuid_0x15_eax = static_cast<uint32_t>(*options.cpuid_0x15_eax);
  if (options.cpuid_0x15_ebx)
    raw.params.cpuid_0x15_ebx = static_cast<uint32_t>(*options.cpuid_0x15_ebx);
  size_t next_elf = 0, next_raw = 0;
  for (bool elf : options.image_order) {
    if (elf && next_elf < options.elf.size()) {
      auto spec = ParseElfImageSpec(options.elf[next_elf++]);
      if (!spec) return UsageError(spec.error().message);
      raw.images.emplace_back(*spec);
    } else if (!elf && next_raw < options.raw.size()) {
      auto spec = ParseRawImageSpec(options.raw[next_raw++]);
      if (!spec) return UsageError(spec.error().message);
      raw.images.emplace_back(*spec);
    }
  }
  raw.kallsyms = options.kallsyms;
  if (raw.params.cpu_auto)
    std::fprintf(stderr, "ptprof: warning: --cpu auto is stored as 'auto': a decode elsewhere "
                         "uses that machine's CPU; give FAMILY/MODEL[/STEPPING] instead\n");

  auto session = OpenSession(options.input, raw, HasRawOptions(options));
  if (!session) return ReportBadInput(session.error().message);
  ArchiveWriteOptions write;
  write.force = options.force;
  write.tool = std::string("ptprof ") + PTPROF_VERSION;
  if (auto st = WriteSessionArchive(*session, options.output, write); !st)
    return ReportBadInput(st.error().message);
  auto written = archive::ArchiveReader::Open(options.output);
  if (!written) return ReportBadInput(written.error().message);
  std::printf("%s: %zu stream%s, %zu image%s, %zu sideband file%s; %zu members, %llu bytes\n",
              options.output.c_str(), session->manifest.streams.size(),
              session->manifest.streams.size() == 1 ? "" : "s", session->manifest.images.size(),
              session->manifest.images.size() == 1 ? "" : "s", session->manifest.sideband.size(),
              session->manifest.sideband.size() == 1 ? "" : "s", written->members().size(),
              static_cast<unsigned long long>(written->file_size()));
  return kExitOk;
}

}  // namespace

Command AddArchiveCommand(CLI::App& parent) {
  auto options = std::make_shared<ArchiveOptions>();
  CLI::App* app = parent.add_subcommand(
      "archive", "Make a self-contained .ptar of a trace with its images (see docs/archive.md)");
  app->add_option("input", options->input, "raw Intel PT trace file, or a .ptar")->required();
  app->add_option("-o,--output", options->output, "the archive to write")->required();
  app->add_flag("--force", options->force, "replace an existing output file");
  CLI::Option* raw = app->add_option("--raw", options->raw,
                  "code image FILE:ADDR, FILE:OFFSET:ADDR or FILE:FROM-TO:ADDR (repeatable)")
      ->allow_extra_args(false);
  CLI::Option* elf = app->add_option("--elf", options->elf,
                  "ELF image FILE[:BASE], BASE relocates its lowest segment (repeatable)")
      ->allow_extra_args(false);
  app->add_option("--kallsyms", options->kallsyms, "kernel symbols (a copy of /proc/kallsyms)");
  app->add_option("--cpu", options->cpu, "recording CPU FAMILY/MODEL[/STEPPING], none or auto");
  app->add_option("--mtc-freq", options->mtc_freq, "IA32_RTIT_CTL.MTCFreq")
      ->check(CLI::Range(0, 15));
  app->add_option("--nom-freq", options->nom_freq, "MSR_PLATFORM_INFO[15:8]")
      ->check(CLI::Range(0, 255));
  app->add_option("--cpuid-0x15.eax", options->cpuid_0x15_eax, "CPUID[0x15].EAX (TSC:CTC denominator)")
      ->check(CLI::Range(uint64_t{0}, uint64_t{UINT32_MAX}));
  app->add_option("--cpuid-0x15.ebx", options->cpuid_0x15_ebx, "CPUID[0x15].EBX (TSC:CTC numerator)")
      ->check(CLI::Range(uint64_t{0}, uint64_t{UINT32_MAX}));
  app->add_option("--addr-filter", options->addr_filters,
                  "address filter N:CFG:FROM-TO as configured when recording (repeatable)")
      ->allow_extra_args(false);
  return {app, [options, app, raw, elf] {
            for (const CLI::Option* option : app->parse_order()) {
              if (option == raw) options->image_order.push_back(false);
              if (option == elf) options->image_order.push_back(true);
            }
            return RunArchive(*options);
          }};
}

}  // namespace ptprof::cli
