// ptprof dump: the Intel PT packets of a raw trace, as text or JSON Lines. The ptdump-compatible
// format (`--format ptdump`) has its own front end in ptdump_compat.cc.
#include <algorithm>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "decoders/pt/packet_listing.h"
#include "decoders/pt/pt_params.h"
#include "sideband/file_bytes.h"
#include "src/cli/command.h"
#include "src/pipeline/input_kind.h"
#include "src/pipeline/session.h"

namespace ptprof::cli {

namespace {

struct DumpOptions {
  std::string input;
  std::string format = "text";
  std::string cpu;
  std::string mtc_freq;
  std::string nom_freq;
  std::string cpuid_0x15_eax;
  std::string cpuid_0x15_ebx;
};

int UsageError(const std::string& message) {
  std::fprintf(stderr, "ptprof: dump: %s\n", message.c_str());
  return kExitUsage;
}

// Fills `params` from the option strings; the error names the option.
Status ParsePtParams(const DumpOptions& options, pt::PtParams& params) {
  if (!options.cpu.empty()) {
    if (auto status = pt::ParseCpu(options.cpu, "--cpu", params); !status) return status;
  }
  struct Field {
    const std::string& text;
    const char* name;
    uint64_t max;
    std::function<void(uint64_t)> store;
  };
  const Field fields[] = {
      {options.mtc_freq, "--mtc-freq", 15,
       [&](uint64_t v) { params.mtc_freq = static_cast<uint8_t>(v); }},
      {options.nom_freq, "--nom-freq", UINT8_MAX,
       [&](uint64_t v) { params.nom_freq = static_cast<uint8_t>(v); }},
      {options.cpuid_0x15_eax, "--cpuid-0x15.eax", UINT32_MAX,
       [&](uint64_t v) { params.cpuid_0x15_eax = static_cast<uint32_t>(v); }},
      {options.cpuid_0x15_ebx, "--cpuid-0x15.ebx", UINT32_MAX,
       [&](uint64_t v) { params.cpuid_0x15_ebx = static_cast<uint32_t>(v); }},
  };
  for (const Field& field : fields) {
    if (field.text.empty()) continue;
    auto value = pt::ParseUnsigned(field.text, field.name, field.max);
    if (!value) return tl::unexpected(value.error());
    field.store(*value);
  }
  return {};
}

int RunDump(const DumpOptions& options) {
  pt::PtParams params;
  if (auto status = ParsePtParams(options, params); !status)
    return UsageError(status.error().message);
  const auto format = options.format == "jsonl" ? pt::ListingFormat::kJsonl
                                                : pt::ListingFormat::kText;

  auto bytes = ReadFileBytes(options.input);
  if (!bytes) return ReportBadInput(bytes.error().message);
  if (bytes->empty()) return ReportBadInput(options.input + ": offset 0x0: empty file");
  // Containers that `dump` cannot open yet get a clearer message than "no PSB found".
  const std::vector<uint8_t> head(bytes->begin(),
                                  bytes->begin() + std::min<size_t>(bytes->size(), 4096));
  const InputKind kind = ClassifyBytes(head);
  if (kind == InputKind::kPtar) {
    // A .ptar: list its trace stream with the parameters recorded in it.
    const bool pt_options = !options.cpu.empty() || !options.mtc_freq.empty() ||
                            !options.nom_freq.empty() || !options.cpuid_0x15_eax.empty() ||
                            !options.cpuid_0x15_ebx.empty();
    auto archived = OpenIfArchive(options.input, pt_options);
    if (!archived) return ReportBadInput(archived.error().message);
    if (*archived) {
      params = (*archived)->params();
      *bytes = std::move((*archived)->stream_bytes[0]);
    }
  } else if (kind != InputKind::kRawPt && kind != InputKind::kUnknown)
    return ReportBadInput(options.input + ": offset 0x0: this is " + InputKindName(kind) +
                          ", not a raw Intel PT stream (dump reads raw PT only for now)");

  std::string pending;
  auto flush = [&pending] {
    std::fwrite(pending.data(), 1, pending.size(), stdout);
    pending.clear();
  };
  pt::PacketListing listing(params, format, [&](std::string_view text) {
    pending += text;
    if (pending.size() >= (1u << 16)) flush();
  });
  auto summary = listing.List(*bytes);
  flush();
  std::fflush(stdout);
  if (!summary) return ReportBadInput(options.input + ": " + summary.error().message);
  const uint64_t errors = summary->gaps - (summary->truncated ? 1 : 0);
  if (errors != 0)
    std::fprintf(stderr,
                 "ptprof: warning: %s: %llu decode error(s); %llu byte(s) skipped to resynchronise\n",
                 options.input.c_str(), static_cast<unsigned long long>(errors),
                 static_cast<unsigned long long>(summary->skipped_bytes));
  if (summary->truncated)
    std::fprintf(stderr, "ptprof: warning: %s: offset %#llx: the trace ends inside a packet\n",
                 options.input.c_str(), static_cast<unsigned long long>(summary->truncated_at));
  return kExitOk;
}

}  // namespace

Command AddDumpCommand(CLI::App& parent) {
  auto options = std::make_shared<DumpOptions>();
  CLI::App* app = parent.add_subcommand(
      "dump", "List the Intel PT packets of a raw trace (see docs/dump.md)");
  app->add_option("input", options->input, "raw Intel PT trace file")->required();
  app->add_option("--format", options->format,
                  "text (default), jsonl, or ptdump (libipt 2.0.5 ptdump's exact listing; takes "
                  "ptdump's options, see 'ptprof dump --format ptdump --help')")
      ->check(CLI::IsMember({"text", "jsonl"}));
  app->add_option("--cpu", options->cpu,
                  "recording CPU as FAMILY/MODEL[/STEPPING], 'auto' or 'none' (selects errata)");
  app->add_option("--mtc-freq", options->mtc_freq, "MTC frequency (IA32_RTIT_CTL[17:14])");
  app->add_option("--nom-freq", options->nom_freq, "nominal frequency (MSR_PLATFORM_INFO[15:8])");
  app->add_option("--cpuid-0x15.eax", options->cpuid_0x15_eax, "CPUID[0x15].EAX (TSC:CTC denominator)");
  app->add_option("--cpuid-0x15.ebx", options->cpuid_0x15_ebx, "CPUID[0x15].EBX (TSC:CTC numerator)");
  return {app, [options] { return RunDump(*options); }};
}

}  // namespace ptprof::cli
