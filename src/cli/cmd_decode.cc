// ptprof decode: the instruction flow of a raw Intel PT trace, as blocks (default) or
// instructions, in text (with symbols and disassembly) or JSON Lines. The ptxed-compatible format
// (`--format ptxed`) has its own front end in ptxed_compat.cc.
#include <cinttypes>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "decoders/pt/flow_session.h"
#include "decoders/pt/pt_params.h"
#include "sideband/file_bytes.h"
#include "sideband/image_set.h"
#include "sideband/x86_insn.h"
#include "src/cli/command.h"
#include "src/pipeline/session.h"
#include "src/analyses/flow_stats.h"
#include "src/pipeline/fanout_sink.h"
#include "src/report/event_writer.h"

namespace ptprof::cli {

namespace {

struct DecodeOptions {
  std::string input;
  std::string pt;
  std::vector<std::string> raw;
  std::vector<std::string> elf;
  // Each image as given: true for --elf, in command-line order (later images hide earlier ones).
  std::vector<bool> image_order;
  std::vector<std::string> addr_filters;
  std::string cpu;
  std::optional<uint64_t> mtc_freq;
  std::optional<uint64_t> nom_freq;
  std::optional<uint64_t> cpuid_0x15_eax;
  std::optional<uint64_t> cpuid_0x15_ebx;
  bool insn = false;
  bool blocks = false;
  bool ticks = false;
  bool summary = false;
  std::string format = "text";
};

int UsageError(const std::string& message) {
  std::fprintf(stderr, "ptprof: decode: %s\n", message.c_str());
  return kExitUsage;
}

// "N:CFG:FROM-TO" (IA32_RTIT_CTL.ADDRn_CFG and IA32_RTIT_ADDRn_A/B, C notation) into `params`.
Status ParseAddrFilter(const std::string& text, pt::PtParams& params) {
  auto bad = [&] {
    return Fail("--addr-filter " + text + ": expected N:CFG:FROM-TO (N 0-3, CFG 0-15)");
  };
  size_t first = text.find(':');
  size_t second = first == std::string::npos ? first : text.find(':', first + 1);
  if (second == std::string::npos) return bad();
  size_t dash = text.find('-', second + 1);
  if (dash == std::string::npos) return bad();
  auto n = pt::ParseUnsigned(text.substr(0, first), "--addr-filter", 3);
  auto cfg = pt::ParseUnsigned(text.substr(first + 1, second - first - 1), "--addr-filter", 15);
  auto from = pt::ParseUnsigned(text.substr(second + 1, dash - second - 1), "--addr-filter",
                                UINT64_MAX);
  auto to = pt::ParseUnsigned(text.substr(dash + 1), "--addr-filter", UINT64_MAX);
  if (!n || !cfg || !from || !to) return bad();
  params.filter[*n] = pt::AddrFilter{static_cast<uint8_t>(*cfg), *from, *to};
  return {};
}

// Forwards to the writer and remembers the first gap, for the closing warning.
class GapWatch : public EventSink {
 public:
  explicit GapWatch(EventSink& next) : next_(next) {}
  void OnEvent(const TraceEvent& event) override {
    if (const auto* gap = std::get_if<TraceGap>(&event.body); gap && !first_) {
      first_ = *gap;
      first_offset_ = event.header.offset;
    }
    next_.OnEvent(event);
  }
  void OnEnd() override { next_.OnEnd(); }
  const std::optional<TraceGap>& first() const { return first_; }
  uint64_t first_offset() const { return first_offset_; }

 private:
  EventSink& next_;
  std::optional<TraceGap> first_;
  uint64_t first_offset_ = 0;
};

int RunDecode(const DecodeOptions& options) {
  if (options.input.empty() == options.pt.empty())
    return UsageError("give the trace once, as an argument or with --pt");
  const std::string& trace_file = options.pt.empty() ? options.input : options.pt;

  pt::FlowRequest request;
  request.insns = options.insn;
  request.ticks = options.ticks;
  request.cpu = 0;  // a raw trace is one stream
  if (!options.cpu.empty()) {
    if (auto st = pt::ParseCpu(options.cpu, "--cpu", request.params); !st)
      return UsageError(st.error().message);
  }
  for (const std::string& text : options.addr_filters) {
    if (auto st = ParseAddrFilter(text, request.params); !st) return UsageError(st.error().message);
  }
  if (options.mtc_freq) request.params.mtc_freq = static_cast<uint8_t>(*options.mtc_freq);
  if (options.nom_freq) request.params.nom_freq = static_cast<uint8_t>(*options.nom_freq);
  if (options.cpuid_0x15_eax)
    request.params.cpuid_0x15_eax = static_cast<uint32_t>(*options.cpuid_0x15_eax);
  if (options.cpuid_0x15_ebx)
    request.params.cpuid_0x15_ebx = static_cast<uint32_t>(*options.cpuid_0x15_ebx);

  ImageSet images;
  size_t next_elf = 0, next_raw = 0;
  for (bool elf : options.image_order) {
    if (elf) {
      if (next_elf >= options.elf.size()) break;
      auto spec = ParseElfImageSpec(options.elf[next_elf++]);
      if (!spec) return UsageError(spec.error().message);
      if (auto st = images.AddElf(*spec); !st) return ReportBadInput(st.error().message);
    } else {
      if (next_raw >= options.raw.size()) break;
      auto spec = ParseRawImageSpec(options.raw[next_raw++]);
      if (!spec) return UsageError(spec.error().message);
      if (auto st = images.AddRaw(*spec); !st) return ReportBadInput(st.error().message);
    }
  }

  // --- .ptar input (src/pipeline/session.h): the archive supplies the trace, the images and the
  // PT parameters; `archived` keeps its extracted images alive until the decode is done. ---
  auto archived = OpenIfArchive(trace_file, !options.raw.empty() || !options.elf.empty() ||
                                                !options.cpu.empty() || !options.addr_filters.empty() ||
                                                options.mtc_freq || options.nom_freq ||
                                                options.cpuid_0x15_eax || options.cpuid_0x15_ebx);
  if (!archived) return ReportBadInput(archived.error().message);
  if (*archived) {
    images = std::move((*archived)->images);
    request.params = (*archived)->params();
  }
  auto trace = *archived ? Result<std::vector<uint8_t>>(std::move((*archived)->stream_bytes[0]))
                         : ReadFileBytes(trace_file);
  // --- end of the .ptar hook ---
  if (!trace) return ReportBadInput(trace.error().message);

  X86Decoder x86;
  EventWriterOptions writer_options;
  writer_options.format = options.format == "jsonl" ? EventFormat::kJsonl : EventFormat::kText;
  writer_options.symbolize = [&images](uint64_t ip) { return images.Symbolize(ip); };
  writer_options.disassemble = [&x86](const Instruction& insn) {
    auto text = x86.Format(insn.bytes, insn.size, insn.mode, insn.ip);
    return text ? *text : std::string();
  };
  EventWriter writer(stdout, writer_options);
  FlowStats stats([&images](uint64_t ip) {
    const Symbol* symbol = images.symbols().Find(ip);
    return symbol ? symbol->name : std::string();
  });
  std::vector<EventSink*> sinks = {&writer};
  if (options.summary) sinks.push_back(&stats);
  FanoutSink fanout(sinks);
  GapWatch watch(fanout);
  auto summary = pt::DecodeFlow(*trace, images, request, watch);
  if (!summary) return ReportBadInput(trace_file + ": " + summary.error().message);
  for (const std::string& warning : summary->warnings)
    std::fprintf(stderr, "ptprof: warning: %s\n", warning.c_str());
  if (!summary->has_psb)
    return ReportBadInput(trace_file + ": offset 0x0: no PSB found: not an Intel PT trace");
  if (options.summary) {
    if (writer_options.format == EventFormat::kJsonl)
      stats.WriteJson(stdout);
    else
      stats.WriteText(stdout);
  }
  if (watch.first()) {
    const TraceGap& gap = *watch.first();
    std::fprintf(stderr, "ptprof: warning: %s: offset 0x%" PRIx64 ": %s (%" PRIu64
                 " gap%s in the decode)\n",
                 trace_file.c_str(), watch.first_offset(), gap.detail.c_str(), summary->gaps,
                 summary->gaps == 1 ? "" : "s");
  }
  return kExitOk;
}

}  // namespace

Command AddDecodeCommand(CLI::App& parent) {
  auto options = std::make_shared<DecodeOptions>();
  CLI::App* app = parent.add_subcommand(
      "decode", "Decode the instruction flow of an Intel PT trace (blocks or instructions)");
  app->add_option("input", options->input, "raw Intel PT trace file");
  app->add_option("--pt", options->pt, "raw Intel PT trace file (instead of the argument)");
  CLI::Option* raw = app->add_option("--raw", options->raw,
                  "code image FILE:ADDR, FILE:OFFSET:ADDR or FILE:FROM-TO:ADDR (repeatable)")
      ->allow_extra_args(false);
  CLI::Option* elf = app->add_option("--elf", options->elf,
                  "ELF image FILE[:BASE], BASE relocates its lowest segment (repeatable)")
      ->allow_extra_args(false);
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
  auto* insn = app->add_flag("--insn", options->insn, "one record per instruction");
  auto* blocks = app->add_flag("--blocks", options->blocks, "one record per block (default)");
  insn->excludes(blocks);
  app->add_flag("--ticks", options->ticks, "report timing packets as tick events (at the IP)");
  app->add_flag("--summary", options->summary,
                "after the flow, a summary: instructions, blocks, gaps, exits, top functions");
  app->add_option("--format", options->format,
                  "text, jsonl, or ptxed (libipt ptxed's options and output; see docs/decode.md)")
      ->check(CLI::IsMember({"text", "jsonl"}));
  return {app, [options, app, raw, elf] {
            // CLI11 keeps each option's values apart; its parse order restores how --raw and
            // --elf interleave, which decides which image wins where they overlap.
            for (const CLI::Option* option : app->parse_order()) {
              if (option == raw) options->image_order.push_back(false);
              if (option == elf) options->image_order.push_back(true);
            }
            return RunDecode(*options);
          }};
}

}  // namespace ptprof::cli
