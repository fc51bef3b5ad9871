#include "src/cli/input_options.h"

#include "decoders/pt/flow_session.h"
#include "src/model/decode_defaults.h"

#include <cstdlib>

namespace ptprof::cli {

bool InputOptions::AnyGiven() const {
  return !raw.empty() || !elf.empty() || !addr_filters.empty() || !cpu.empty() || mtc_freq ||
         nom_freq || cpuid_0x15_eax || cpuid_0x15_ebx;
}

void InputOptions::RecordImageOrder(const CLI::App& app) {
  // CLI11 keeps each option's values apart; its parse order tells how --raw and --elf interleave.
  image_order.clear();
  for (const CLI::Option* option : app.parse_order()) {
    if (option == raw_option) image_order.push_back(false);
    if (option == elf_option) image_order.push_back(true);
  }
}

Result<RawInputOptions> InputOptions::ToRawInput() const {
  RawInputOptions out;
  if (!cpu.empty()) {
    if (auto st = pt::ParseCpu(cpu, "--cpu", out.params); !st) return tl::unexpected(st.error());
  }
  for (const std::string& text : addr_filters) {
    if (auto st = pt::ParseAddressFilter(text, out.params); !st) return tl::unexpected(st.error());
  }
  if (mtc_freq) out.params.mtc_freq = static_cast<uint8_t>(*mtc_freq);
  if (nom_freq) out.params.nom_freq = static_cast<uint8_t>(*nom_freq);
  if (cpuid_0x15_eax) out.params.cpuid_0x15_eax = static_cast<uint32_t>(*cpuid_0x15_eax);
  if (cpuid_0x15_ebx) out.params.cpuid_0x15_ebx = static_cast<uint32_t>(*cpuid_0x15_ebx);
  out.symfs = symfs;
  out.buildid_dir = buildid_dir;
  out.kallsyms = kallsyms;
  out.kcore_dir = kcore;
  if (out.buildid_dir.empty()) {
    const char* home = std::getenv("HOME");
    if (home && *home) out.buildid_dir = std::string(home) + "/.debug";
  }
  size_t next_elf = 0, next_raw = 0;
  for (bool is_elf : image_order) {
    if (is_elf && next_elf < elf.size()) {
      auto spec = ParseElfImageSpec(elf[next_elf++]);
      if (!spec) return tl::unexpected(spec.error());
      out.images.emplace_back(*spec);
    } else if (!is_elf && next_raw < raw.size()) {
      auto spec = ParseRawImageSpec(raw[next_raw++]);
      if (!spec) return tl::unexpected(spec.error());
      out.images.emplace_back(*spec);
    }
  }
  return out;
}

void AddImageOptions(CLI::App& app, InputOptions& options) {
  options.raw_option =
      app.add_option("--raw", options.raw,
                     "code image FILE:ADDR, FILE:OFFSET:ADDR or FILE:FROM-TO:ADDR (repeatable)")
          ->allow_extra_args(false);
  options.elf_option =
      app.add_option("--elf", options.elf,
                     "ELF image FILE[:BASE], BASE relocates its lowest segment (repeatable)")
          ->allow_extra_args(false);
}

void AddPtOptions(CLI::App& app, InputOptions& options) {
  app.add_option("--cpu", options.cpu, "recording CPU FAMILY/MODEL[/STEPPING], none or auto");
  app.add_option("--mtc-freq", options.mtc_freq, "IA32_RTIT_CTL.MTCFreq")->check(CLI::Range(0, 15));
  app.add_option("--nom-freq", options.nom_freq, "MSR_PLATFORM_INFO[15:8]")
      ->check(CLI::Range(0, 255));
  app.add_option("--cpuid-0x15.eax", options.cpuid_0x15_eax, "CPUID[0x15].EAX (TSC:CTC denominator)")
      ->check(CLI::Range(uint64_t{0}, uint64_t{UINT32_MAX}));
  app.add_option("--cpuid-0x15.ebx", options.cpuid_0x15_ebx, "CPUID[0x15].EBX (TSC:CTC numerator)")
      ->check(CLI::Range(uint64_t{0}, uint64_t{UINT32_MAX}));
}

void AddAddrFilterOption(CLI::App& app, InputOptions& options) {
  app.add_option("--addr-filter", options.addr_filters,
                 "address filter N:CFG:FROM-TO as configured when recording (repeatable)")
      ->allow_extra_args(false);
  AddFlowDecodeOptions(app);
}

void AddFlowDecodeOptions(CLI::App& app) {
  app.add_option_function<unsigned>(
         "--jobs",
         [](unsigned jobs) { SetDefaultDecodeJobs(jobs); },
         "decode a trace stream on N threads, in segments cut at PSBs (PT) or frames (CoreSight) "
         "(default 1)")
      ->check(CLI::Range(1, 1024));
  app.add_option_function<uint64_t>(
         "--psb-segment",
         [](uint64_t bytes) { SetDefaultSegmentBytes(bytes); },
         "bytes of trace per parallel segment (default 262144; an analysis or `decode` output "
         "that takes its stream in parts picks its own size: docs/decode.md)")
      ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 40));
  app.add_option_function<std::string>(
         "--engine",
         [](const std::string& name) {
           pt::SetDefaultFlowEngine(name == "fast" ? pt::FlowEngine::kFast : pt::FlowEngine::kLibipt);
         },
         "block walker for the PT flow: fast (ptprof's own, default; hands what it does not handle "
         "to libipt) or libipt (libipt's block decoder); both give the same output")
      ->check(CLI::IsMember({"libipt", "fast"}));
}

void AddStreamOption(CLI::App& app, InputOptions& options) {
  app.add_option("--stream", options.streams,
                 "read only this trace stream (cpu0, tid1234, ... as 'ptprof info' names them; "
                 "repeatable; default: all)")
      ->allow_extra_args(false);
}

void AddBinarySearchOptions(CLI::App& app, InputOptions& options) {
  app.add_option("--symfs", options.symfs,
                 "perf.data: look up the recorded binary paths under DIR (instead of /)");
  app.add_option("--buildid-dir", options.buildid_dir,
                 "perf.data: perf's build-id cache to find binaries in (default ~/.debug)");
  app.add_option("--kallsyms", options.kallsyms,
                 "kernel symbols: a copy of /proc/kallsyms (symbolises kernel addresses)");
  app.add_option("--kcore", options.kcore,
                 "perf.data: the kernel's code and symbols from perf record --kcore's kcore_dir "
                 "(DIR/kcore, DIR/kallsyms)");
}

}  // namespace ptprof::cli
