#include "decoders/pt/ptxed_options.h"

#include <cerrno>
#include <cstdlib>

namespace ptprof::pt {

namespace {

using ParseResult = tl::expected<PtxedRequest, PtxedParseError>;

tl::unexpected<PtxedParseError> Usage(std::string message) {
  return tl::unexpected<PtxedParseError>(PtxedParseError{true, std::move(message)});
}
tl::unexpected<PtxedParseError> BadInput(std::string message) {
  return tl::unexpected<PtxedParseError>(PtxedParseError{false, std::move(message)});
}

// ptxed's "--cpu": none, auto, or family/model[/stepping] with each part in C notation.
Status ParsePtxedCpu(const std::string& text, PtParams& params) {
  if (text == "none" || text == "auto") return ParseCpu(text, "--cpu", params);
  const char* p = text.c_str();
  long parts[3] = {0, 0, 0};
  const long limits[3] = {UINT16_MAX, UINT8_MAX, UINT8_MAX};
  int count = 0;
  for (; count < 3; ++count) {
    char* end = nullptr;
    errno = 0;
    parts[count] = std::strtol(p, &end, 0);
    if (end == p || errno != 0 || parts[count] < 0 || parts[count] > limits[count]) break;
    p = end;
    if (*p != '/') {
      ++count;
      break;
    }
    ++p;
  }
  if (*p != '\0' || count < 2) return Fail("--cpu: cpu must be specified as f/m[/s]");
  params.cpu = PtCpu{static_cast<uint16_t>(parts[0]), static_cast<uint8_t>(parts[1]),
                     static_cast<uint8_t>(parts[2])};
  params.cpu_auto = false;
  return {};
}

// Reads left to right, keeping ptxed's rules about what may follow --pt.
class PtxedArgParser {
 public:
  explicit PtxedArgParser(const std::vector<std::string>& args) : args_(args) {}

  ParseResult Parse() {
    while (next_ < args_.size()) {
      const std::string arg = args_[next_++];
      if (auto st = One(arg); !st) return tl::unexpected(st.error());
      if (request_.help || request_.version) return request_;
    }
    if (!request_.has_pt) return Usage("decode --format ptxed: no pt file (--pt FILE)");
    request_.params = params_at_pt_;
    request_.flow = flow_at_pt_;
    if (request_.stats && !request_.stat_insn && !request_.stat_blocks) {
      request_.stat_insn = true;
      request_.stat_blocks = !request_.flow.insn_decoder;
    }
    return request_;
  }

 private:
  using Step = tl::expected<void, PtxedParseError>;

  // The value of option `name`; ptxed treats a following "--option" as a missing value.
  tl::expected<std::string, PtxedParseError> Value(const std::string& name) {
    if (next_ >= args_.size() || args_[next_].rfind("--", 0) == 0)
      return Usage(name + ": missing argument");
    return args_[next_++];
  }

  tl::expected<uint64_t, PtxedParseError> Number(const std::string& name, uint64_t max) {
    auto text = Value(name);
    if (!text) return tl::unexpected(text.error());
    errno = 0;
    char* end = nullptr;
    unsigned long long value = std::strtoull(text->c_str(), &end, 0);
    if (errno != 0 || end == text->c_str() || *end != '\0')
      return Usage(name + ": bad argument: " + *text);
    if (value > max) return Usage(name + ": value too big: " + *text);
    return static_cast<uint64_t>(value);
  }

  Step BeforePt(const std::string& name) {
    if (request_.has_pt) return Usage("please specify " + name + " before --pt");
    return {};
  }

  Step Filter(const std::string& arg) {
    // --filter:addrN_cfg / _a / _b
    if (arg.size() < 15 || arg[13] < '0' || arg[13] > '3' || arg[14] != '_')
      return Usage("unknown option: " + arg);
    int n = arg[13] - '0';
    std::string field = arg.substr(15);
    if (field != "cfg" && field != "a" && field != "b") return Usage("unknown option: " + arg);
    if (auto st = BeforePt(arg); !st) return st;
    auto value = Number(arg, field == "cfg" ? 15 : UINT64_MAX);
    if (!value) return tl::unexpected(value.error());
    AddrFilter& f = params_.filter[n];
    if (field == "cfg") f.cfg = static_cast<uint8_t>(*value);
    if (field == "a") f.a = *value;
    if (field == "b") f.b = *value;
    return {};
  }

  Step One(const std::string& arg) {
    PtxedRequest& r = request_;
    if (arg == "--help" || arg == "-h") {
      r.help = true;
      return {};
    }
    if (arg == "--version") {
      r.version = true;
      return {};
    }
    if (arg == "--pt") {
      auto value = Value(arg);
      if (!value) return tl::unexpected(value.error());
      if (r.has_pt) return Usage("duplicate pt sources: " + *value);
      auto spec = ParseFileRangeSpec(*value);
      if (!spec) return BadInput(spec.error().message);
      r.pt = *spec;
      r.has_pt = true;
      params_at_pt_ = params_;
      flow_at_pt_ = flow_;
      return {};
    }
    if (arg == "--raw") {
      auto value = Value(arg);
      if (!value) return tl::unexpected(value.error());
      auto spec = ParseRawImageSpec(*value);
      if (!spec) return Usage(spec.error().message);
      PtxedImage image;
      image.raw = *spec;
      r.images.push_back(image);
      return {};
    }
    if (arg == "--elf") {
      auto value = Value(arg);
      if (!value) return tl::unexpected(value.error());
      auto spec = ParseElfImageSpec(*value);
      if (!spec) return Usage(spec.error().message);
      PtxedImage image;
      image.elf = true;
      image.elf_spec = *spec;
      r.images.push_back(image);
      return {};
    }
    if (arg == "--cpu") {
      if (auto st = BeforePt("--cpu"); !st) return st;
      auto value = Value(arg);
      if (!value) return tl::unexpected(value.error());
      if (auto st = ParsePtxedCpu(*value, params_); !st)
        return Usage("--cpu: cpu must be specified as f/m[/s], none or auto");
      return {};
    }
    if (arg == "--mtc-freq" || arg == "--nom-freq") {
      auto value = Number(arg, UINT8_MAX);
      if (!value) return tl::unexpected(value.error());
      (arg == "--mtc-freq" ? params_.mtc_freq : params_.nom_freq) = static_cast<uint8_t>(*value);
      return {};
    }
    if (arg == "--cpuid-0x15.eax" || arg == "--cpuid-0x15.ebx") {
      auto value = Number(arg, UINT32_MAX);
      if (!value) return tl::unexpected(value.error());
      (arg == "--cpuid-0x15.eax" ? params_.cpuid_0x15_eax : params_.cpuid_0x15_ebx) =
          static_cast<uint32_t>(*value);
      return {};
    }
    if (arg.rfind("--filter:addr", 0) == 0) return Filter(arg);
    if (arg == "--insn-decoder" || arg == "--block-decoder") {
      if (auto st = BeforePt(arg); !st) return st;
      flow_.insn_decoder = arg == "--insn-decoder";
      return {};
    }
    if (arg == "--block:end-on-call") return Set(flow_.end_on_call);
    if (arg == "--block:end-on-jump") return Set(flow_.end_on_jump);
    if (arg == "--event:tick") return Set(flow_.tick_events);
    if (arg == "--block:show-blocks") return Set(r.show_blocks);
    if (arg == "--no-inst") return Set(r.no_inst);
    if (arg == "--quiet" || arg == "-q") return Set(r.quiet);
    if (arg == "--offset") return Set(r.print_offset);
    if (arg == "--time") return Set(r.print_time);
    if (arg == "--raw-insn") return Set(r.raw_insn);
    if (arg == "--att") return Set(r.att);
    if (arg == "--check") return Set(r.check);
    if (arg == "--event:time") return Set(r.event_time);
    if (arg == "--event:ip") return Set(r.event_ip);
    if (arg == "--verbose" || arg == "-v") return Set(r.verbose);
    if (arg == "--stat") return Set(r.stats);
    if (arg == "--stat:insn") {
      r.stats = true;
      return Set(r.stat_insn);
    }
    if (arg == "--stat:blocks") {
      r.stats = true;
      return Set(r.stat_blocks);
    }
    if (arg == "--iscache-limit") {
      // The limit only bounds memory; our output does not depend on it.
      auto value = Number(arg, UINT64_MAX);
      if (!value) return tl::unexpected(value.error());
      return {};
    }
    if (arg == "--sb" || arg.rfind("--sb:", 0) == 0 || arg.rfind("--pevent:", 0) == 0) {
      size_t at = next_ - 1;
      auto handled = ParseSidebandOption(args_, at, SidebandTool::kPtxed, r.sideband);
      if (!handled) return Usage(handled.error().message);
      next_ = at + 1;
      if (*handled) return {};
    }
    return Usage("unknown option: " + arg);
  }

  static Step Set(bool& flag) {
    flag = true;
    return {};
  }

  const std::vector<std::string>& args_;
  size_t next_ = 0;
  PtxedRequest request_;
  PtParams params_;
  FlowOptions flow_;
  PtParams params_at_pt_;
  FlowOptions flow_at_pt_;
};

}  // namespace

tl::expected<PtxedRequest, PtxedParseError> ParsePtxedArgs(const std::vector<std::string>& args) {
  return PtxedArgParser(args).Parse();
}

std::string PtxedHelp() {
  return R"(usage: ptprof decode --format ptxed [<options>]

Decodes an Intel PT trace and prints it exactly like libipt 2.0.5's ptxed.

options:
  --help|-h                            this text.
  --version                            display version information and exit.
  --att                                print instructions in att format.
  --no-inst                            do not print instructions (only addresses).
  --quiet|-q                           do not print anything (except errors).
  --offset                             print the offset into the trace file.
  --time                               print the current timestamp.
  --raw-insn                           print the raw bytes of each instruction.
  --check                              perform checks (expensive).
  --iscache-limit <size>               accepted for compatibility; has no effect.
  --event:time                         print the tsc for events if available.
  --event:ip                           print the ip of events if available.
  --event:tick                         request tick events.
  --filter:addr<n>_cfg <cfg>           set IA32_RTIT_CTL.ADDRn_CFG to <cfg>.
  --filter:addr<n>_a <base>            set IA32_RTIT_ADDRn_A to <base>.
  --filter:addr<n>_b <limit>           set IA32_RTIT_ADDRn_B to <limit>.
  --stat                               print statistics (even when quiet).
                                       collects all statistics unless one or more are selected.
  --stat:insn                          collect number of instructions.
  --stat:blocks                        collect number of blocks.
  --verbose|-v                         print the sections loaded from ELF files.
  --pt <file>[:<from>[-<to>]]          load the processor trace data from <file>.
  --elf <file>[:<base>]                load an ELF from <file> at address <base>.
  --raw <file>[:<from>[-<to>]]:<base>  load a raw binary from <file> at address <base>.
  --cpu none|auto|f/m[/s]              set cpu to the given value and decode according to it.
  --mtc-freq <n>                       set the MTC frequency (IA32_RTIT_CTL[17:14]) to <n>.
  --nom-freq <n>                       set the nominal frequency (MSR_PLATFORM_INFO[15:8]) to <n>.
  --cpuid-0x15.eax                     set the value of cpuid[0x15].eax.
  --cpuid-0x15.ebx                     set the value of cpuid[0x15].ebx.
  --insn-decoder                       use the instruction flow decoder.
  --block-decoder                      use the block decoder (default).
  --block:show-blocks                  show blocks in the output.
  --block:end-on-call                  set the end-on-call block decoder flag.
  --block:end-on-jump                  set the end-on-jump block decoder flag.

perf sideband (libipt's pevent files, read as ptxed 2.0.5 reads them):
)" + SidebandHelp(SidebandTool::kPtxed);
}

}  // namespace ptprof::pt
