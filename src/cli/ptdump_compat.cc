// `ptprof dump --format ptdump [ptdump options] FILE[:FROM[-TO]]`: the packet listing of libipt
// 2.0.5's ptdump, with ptdump's own option spellings (which CLI11 cannot express, hence the hand
// parser). Usage errors exit 2, unreadable input 1, as for every ptprof command.
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "decoders/pt/pevent_options.h"
#include "decoders/pt/pevent_queue.h"
#include "decoders/pt/pevent_record_text.h"
#include "decoders/pt/pt_params.h"
#include "decoders/pt/ptdump_writer.h"
#include "sideband/file_bytes.h"
#include "src/cli/command.h"

namespace ptprof::cli {

namespace {

constexpr const char* kUsagePrefix = "ptprof dump --format ptdump";

int UsageError(const std::string& message) {
  std::fprintf(stderr, "ptprof: dump --format ptdump: %s\n", message.c_str());
  return kExitUsage;
}

void PrintHelp() {
  std::printf(
      "usage: %s [<options>] <ptfile>[:<from>[-<to>]]\n\n"
      "Lists the Intel PT packets of <ptfile> exactly as libipt 2.0.5's ptdump does.\n\n"
      "options:\n"
      "  --help|-h                 this text.\n"
      "  --version                 display version information and exit.\n"
      "  --no-sync                 don't try to sync to the first PSB, assume a valid\n"
      "                            sync point at the beginning of the trace.\n"
      "  --quiet                   don't print anything but errors.\n"
      "  --no-pad                  don't show PAD packets.\n"
      "  --no-timing               don't show timing packets.\n"
      "  --no-cyc                  don't show CYC packets and ignore them when tracking time.\n"
      "  --no-offset               don't show the offset as the first column.\n"
      "  --raw                     show raw packet bytes.\n"
      "  --lastip                  show last IP updates on packets with IP payloads.\n"
      "  --exec-mode               show the current execution mode on mode.exec packets.\n"
      "  --time                    show the estimated TSC on timing packets.\n"
      "  --tcal                    show time calibration information.\n"
      "  --time-delta              show timing information as delta.\n"
      "  --no-tcal                 skip timing calibration.\n"
      "                            this will result in errors when CYC packets are encountered.\n"
      "  --no-wall-clock           suppress the no-time error and print relative time.\n"
      "  --cpu none|auto|f/m[/s]   set cpu to the given value and decode according to:\n"
      "                              none     spec (default)\n"
      "                              auto     current cpu\n"
      "                              f/m[/s]  family/model[/stepping]\n"
      "  --mtc-freq <n>            set the MTC frequency (IA32_RTIT_CTL[17:14]) to <n>.\n"
      "  --nom-freq <n>            set the nominal frequency (MSR_PLATFORM_INFO[15:8]) to <n>.\n"
      "  --cpuid-0x15.eax          set the value of cpuid[0x15].eax.\n"
      "  --cpuid-0x15.ebx          set the value of cpuid[0x15].ebx.\n"
      "  <ptfile>[:<from>[-<to>]]  load the processor trace data from <ptfile>;\n"
      "                            an optional offset or range can be given.\n\n"
      "perf sideband records, listed among the packets by time:\n%s",
      kUsagePrefix, pt::SidebandHelp(pt::SidebandTool::kPtdump).c_str());
}

// The file name and the optional ":FROM[-TO]" suffix of a trace argument. As ptdump does, a suffix
// that does not parse as a range is taken to be part of the file name.
struct TraceArgument {
  std::string path;
  uint64_t offset = 0;
  uint64_t size = UINT64_MAX;  // to the end
};

std::optional<TraceArgument> SplitTraceArgument(const std::string& text, std::string& error) {
  TraceArgument arg{text};
  const size_t colon = text.rfind(':');
  if (colon == std::string::npos || colon + 1 == text.size()) return arg;
  const std::string range = text.substr(colon + 1);
  char* rest = nullptr;
  errno = 0;
  const unsigned long long begin = std::strtoull(range.c_str(), &rest, 0);
  if (errno != 0 || rest == range.c_str()) return arg;
  if (*rest == '\0') {
    arg.path = text.substr(0, colon);
    arg.offset = begin;
    return arg;
  }
  if (*rest != '-') return arg;
  const char* end_text = rest + 1;
  const unsigned long long end = std::strtoull(end_text, &rest, 0);
  if (errno != 0 || *rest != '\0' || rest == end_text) return arg;
  if (end <= begin) {
    error = "bad range in " + text + ": the end must lie after the beginning";
    return std::nullopt;
  }
  arg.path = text.substr(0, colon);
  arg.offset = begin;
  arg.size = end - begin;
  return arg;
}

// ptdump's numeric option arguments: C notation, bounded by the field's width.
bool ParseNumber(const std::vector<std::string>& args, size_t& i, uint64_t max, uint64_t& value,
                 std::string& error) {
  const std::string& option = args[i];
  if (i + 1 >= args.size() || args[i + 1].empty() || args[i + 1].rfind("--", 0) == 0) {
    error = option + ": missing argument";
    return false;
  }
  auto parsed = pt::ParseUnsigned(args[++i], option, max);
  if (!parsed) {
    error = parsed.error().message;
    return false;
  }
  value = *parsed;
  return true;
}

// ptdump's "--cpu f/m[/s]": each part in C notation (so "0x6/0x4e" works too), stepping optional.
bool ParsePtdumpCpu(const std::string& text, pt::PtParams& params) {
  if (text == "none" || text == "auto") return static_cast<bool>(pt::ParseCpu(text, "--cpu", params));
  unsigned long parts[3] = {0, 0, 0};
  const char* p = text.c_str();
  for (int i = 0; i < 3; ++i) {
    char* end = nullptr;
    errno = 0;
    const long value = std::strtol(p, &end, 0);
    const bool last = *end == '\0';
    if (errno != 0 || value < 0 || (end == p && !(i == 2 && last))) return false;
    parts[i] = static_cast<unsigned long>(value);
    if (last) {
      if (i == 0) return false;  // the model is required
      break;
    }
    if (*end != '/' || i == 2) return false;
    p = end + 1;
  }
  if (parts[0] > UINT16_MAX || parts[1] > UINT8_MAX || parts[2] > UINT8_MAX) return false;
  params.cpu = pt::PtCpu{static_cast<uint16_t>(parts[0]), static_cast<uint8_t>(parts[1]),
                         static_cast<uint8_t>(parts[2])};
  params.cpu_auto = false;
  return true;
}

bool IsSidebandOption(const std::string& arg) {
  return arg == "--sb" || arg.rfind("--sb:", 0) == 0 || arg == "--pevent" ||
         arg.rfind("--pevent:", 0) == 0;
}

// The --pevent files, decoded; fails naming the file and offset of a damaged record.
Result<std::vector<pt::PeventSource>> LoadSideband(const pt::SidebandRequest& request) {
  std::vector<pt::PeventSource> sources;
  for (const pt::PeventFile& file : request.files) {
    auto source = pt::PeventSource::Load(file);
    if (!source) return tl::unexpected(source.error());
    sources.push_back(std::move(*source));
  }
  return sources;
}

}  // namespace

int RunPtdumpCompat(const std::vector<std::string>& args) {
  pt::PtdumpOptions options;
  pt::PtParams params;
  pt::SidebandRequest sideband;
  std::optional<std::string> trace_arg;
  std::string error;

  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg.empty() || arg[0] != '-') {
      if (i + 1 < args.size())
        return UsageError("the trace file must be the last argument (got '" + args[i + 1] +
                          "' after '" + arg + "')");
      trace_arg = arg;
      break;
    }
    uint64_t value = 0;
    if (arg == "-h" || arg == "--help") {
      PrintHelp();
      return kExitOk;
    } else if (arg == "--version") {
      std::printf("ptprof %s (ptdump-compatible packet listing, libipt 2.0.5 format)\n",
                  PTPROF_VERSION);
      return kExitOk;
    } else if (arg == "--no-sync") {
      options.no_sync = true;
    } else if (arg == "--quiet") {
      options.quiet = true;
      sideband.print = {};  // ptdump's --quiet silences the sideband listing given so far
    } else if (arg == "--no-pad") {
      options.no_pad = true;
    } else if (arg == "--no-timing") {
      options.no_timing = true;
    } else if (arg == "--no-cyc") {
      options.no_cyc = true;
    } else if (arg == "--no-offset") {
      options.show_offset = false;
    } else if (arg == "--raw") {
      options.show_raw = true;
    } else if (arg == "--lastip") {
      options.show_last_ip = true;
    } else if (arg == "--exec-mode") {
      options.show_exec_mode = true;
    } else if (arg == "--time" || arg == "--tcal") {
      const bool time = arg == "--time";
      if (time ? options.show_tcal : options.show_time)
        return UsageError("specify either --time or --tcal");
      options.track_time = true;
      (time ? options.show_time : options.show_tcal) = true;
    } else if (arg == "--time-delta") {
      options.time_as_delta = true;
    } else if (arg == "--no-tcal") {
      options.no_tcal = true;
    } else if (arg == "--no-wall-clock") {
      options.no_wall_clock = true;
    } else if (IsSidebandOption(arg)) {
      auto handled = pt::ParseSidebandOption(args, i, pt::SidebandTool::kPtdump, sideband);
      if (!handled) return UsageError(handled.error().message);
      if (!*handled) return UsageError("unknown option: " + arg + " (see --help)");
    } else if (arg == "--cpu") {
      if (i + 1 >= args.size()) return UsageError("--cpu: missing argument");
      if (!ParsePtdumpCpu(args[++i], params))
        return UsageError("--cpu: expected f/m[/s], 'none' or 'auto', got '" + args[i] + "'");
    } else if (arg == "--mtc-freq" || arg == "--nom-freq") {
      if (!ParseNumber(args, i, UINT8_MAX, value, error)) return UsageError(error);
      (arg == "--mtc-freq" ? params.mtc_freq : params.nom_freq) = static_cast<uint8_t>(value);
    } else if (arg == "--cpuid-0x15.eax" || arg == "--cpuid-0x15.ebx") {
      if (!ParseNumber(args, i, UINT32_MAX, value, error)) return UsageError(error);
      (arg == "--cpuid-0x15.eax" ? params.cpuid_0x15_eax : params.cpuid_0x15_ebx) =
          static_cast<uint32_t>(value);
    } else {
      return UsageError("unknown option: " + arg + " (see --help)");
    }
  }
  if (!trace_arg) return UsageError("no processor trace file specified");

  auto trace = SplitTraceArgument(*trace_arg, error);
  if (!trace) return UsageError(error);
  auto bytes = ReadFileRange(trace->path, trace->offset, trace->size);
  if (!bytes) return ReportBadInput(bytes.error().message);
  if (bytes->empty())
    return ReportBadInput(fmt::format("{}: offset {:#x}: empty trace", trace->path, trace->offset));

  auto sources = LoadSideband(sideband);
  if (!sources) return ReportBadInput(sources.error().message);
  pt::PeventQueue queue(std::move(*sources));
  if (!sideband.files.empty()) options.track_time = true;  // records are placed by time

  std::string pending;
  auto flush = [&pending] {
    std::fwrite(pending.data(), 1, pending.size(), stdout);
    pending.clear();
  };
  pt::PtdumpWriter writer(params, options, [&](std::string_view text) {
    pending += text;
    if (pending.size() >= (1u << 16)) flush();
  });
  auto emit_sideband = [&](std::string_view text) { pending += text; };
  if (!sideband.files.empty())
    writer.SetTimeHook([&](uint64_t tsc) { pt::PrintDueRecords(queue, tsc, sideband.print, emit_sideband); });
  const int status = writer.Dump(*bytes);
  // What is left comes after the last packet (unless synchronisation failed).
  if (status == 0) pt::PrintDueRecords(queue, UINT64_MAX, sideband.print, emit_sideband);
  flush();
  std::fflush(stdout);
  return status == 0 ? kExitOk : kExitBadInput;
}

}  // namespace ptprof::cli
