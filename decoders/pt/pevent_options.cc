#include "decoders/pt/pevent_options.h"

#include "decoders/pt/pt_params.h"

namespace ptprof::pt {

namespace {

// The value of option args[i]; like libipt's tools, a following "--option" is no value.
Result<std::string> Value(const std::vector<std::string>& args, size_t& i) {
  if (i + 1 >= args.size() || args[i + 1].empty() || args[i + 1].rfind("--", 0) == 0)
    return Fail(args[i] + ": missing argument");
  return args[++i];
}

Result<uint64_t> Number(const std::vector<std::string>& args, size_t& i, uint64_t max) {
  const std::string option = args[i];
  auto text = Value(args, i);
  if (!text) return tl::unexpected(text.error());
  return ParseUnsigned(*text, option, max);
}

}  // namespace

Result<bool> ParseSidebandOption(const std::vector<std::string>& args, size_t& i, SidebandTool tool,
                                 SidebandRequest& request) {
  const std::string& arg = args[i];
  const bool ptxed = tool == SidebandTool::kPtxed;
  PeventConfig& next = request.next;
  if (arg == "--sb" || arg == "--sb:compact") {
    request.print.compact = true;
    request.print.verbose = false;
  } else if (arg == "--sb:verbose") {
    request.print.verbose = true;
    request.print.compact = false;
  } else if (arg == "--sb:filename") {
    request.print.filename = true;
  } else if (arg == "--sb:offset") {
    request.print.offset = true;
  } else if (arg == "--sb:time") {
    request.print.time = true;
  } else if (arg == "--sb:warn") {
    request.warn = true;
  } else if (arg == "--sb:switch" && ptxed) {
    request.print_switch = true;
  } else if (arg == "--pevent:primary" || arg == "--pevent:secondary" || (arg == "--pevent" && !ptxed)) {
    const bool primary = arg != "--pevent:secondary";
    auto text = Value(args, i);
    if (!text) return tl::unexpected(text.error());
    auto range = ParseFileRangeSpec(*text);
    if (!range) return Fail(arg + ": " + range.error().message);
    request.files.push_back(PeventFile{*range, primary, next});
  } else if (arg == "--pevent:sample-type" || arg == "--pevent:time-zero" || arg == "--pevent:tsc-offset" ||
             arg == "--pevent:kernel-start") {
    auto value = Number(args, i, UINT64_MAX);
    if (!value) return tl::unexpected(value.error());
    if (arg == "--pevent:sample-type") next.sample_type = *value;
    if (arg == "--pevent:time-zero") next.clock.time_zero = *value;
    if (arg == "--pevent:tsc-offset") next.tsc_offset = *value;
    if (arg == "--pevent:kernel-start") next.kernel_start = *value;
  } else if (arg == "--pevent:time-shift") {
    // libipt takes any 16-bit shift; shifts of 64 and more are meaningless (and undefined in C).
    auto value = Number(args, i, 63);
    if (!value) return tl::unexpected(value.error());
    next.clock.time_shift = static_cast<uint16_t>(*value);
  } else if (arg == "--pevent:time-mult") {
    auto value = Number(args, i, UINT32_MAX);
    if (!value) return tl::unexpected(value.error());
    if (*value == 0) return Fail("--pevent:time-mult: the multiplier must not be 0");
    next.clock.time_mult = static_cast<uint32_t>(*value);
  } else if (arg == "--pevent:sysroot" || arg == "--pevent:kcore" || arg == "--pevent:vdso-x64" ||
             arg == "--pevent:vdso-x32" || arg == "--pevent:vdso-ia32") {
    auto text = Value(args, i);
    if (!text) return tl::unexpected(text.error());
    if (!ptxed) return true;  // ptdump accepts and ignores them
    if (arg == "--pevent:sysroot") next.sysroot = *text;
    if (arg == "--pevent:kcore") request.kcore.push_back(*text);
    if (arg == "--pevent:vdso-x64") next.vdso_x64 = *text;
    if (arg == "--pevent:vdso-x32") next.vdso_x32 = *text;
    if (arg == "--pevent:vdso-ia32") next.vdso_ia32 = *text;
  } else {
    return false;
  }
  return true;
}

std::string SidebandHelp(SidebandTool tool) {
  const bool ptxed = tool == SidebandTool::kPtxed;
  std::string text =
      "  --sb:compact | --sb       show sideband records in compact format.\n"
      "  --sb:verbose              show sideband records in verbose format.\n"
      "  --sb:filename             show the filename on sideband records.\n"
      "  --sb:offset               show the offset on sideband records.\n"
      "  --sb:time                 show the time on sideband records.\n";
  if (ptxed) text += "  --sb:switch               print the new image name on context switches.\n";
  text += "  --sb:warn                 show sideband warnings.\n";
  text += ptxed ? "  --pevent:primary/secondary <file>[:<from>[-<to>]]\n"
                : "  --pevent[:primary/:secondary] <file>[:<from>[-<to>]]\n";
  text +=
      "                            load a perf_event sideband stream from <file>.\n"
      "                            an optional offset or range can be given.\n"
      "  --pevent:sample-type <val>  set perf_event_attr.sample_type to <val> (default: 0).\n"
      "  --pevent:time-zero <val>    set perf_event_mmap_page.time_zero to <val> (default: 0).\n"
      "  --pevent:time-shift <val>   set perf_event_mmap_page.time_shift to <val> (default: 0).\n"
      "  --pevent:time-mult <val>    set perf_event_mmap_page.time_mult to <val> (default: 1).\n"
      "  --pevent:tsc-offset <val>   show perf events <val> ticks earlier.\n"
      "  --pevent:kernel-start <val> the start address of the kernel.\n";
  if (ptxed) {
    text +=
        "  --pevent:sysroot <path>     prepend <path> to sideband filenames.\n"
        "  --pevent:kcore <file>       load the kernel from a core dump.\n"
        "  --pevent:vdso-x64 <file>    use <file> as 64-bit vdso.\n"
        "  --pevent:vdso-x32 <file>    use <file> as x32 vdso.\n"
        "  --pevent:vdso-ia32 <file>   use <file> as 32-bit vdso.\n";
  } else {
    text +=
        "  --pevent:sysroot <path>     ignored.\n"
        "  --pevent:kcore <file>       ignored.\n"
        "  --pevent:vdso-x64 <file>    ignored.\n"
        "  --pevent:vdso-x32 <file>    ignored.\n"
        "  --pevent:vdso-ia32 <file>   ignored.\n";
  }
  return text;
}

}  // namespace ptprof::pt
