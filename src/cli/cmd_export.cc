// ptprof export --perf-data OUT INPUT: the trace as an intel_pt perf.data that Linux perf reads
// and decodes (`perf script --itrace=...`), so that perf can check ptprof's decode.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include <sys/utsname.h>
#include <unistd.h>

#include <fmt/format.h>

#include "decoders/pt/trace_census.h"
#include "sideband/perf/perf_clock.h"
#include "sideband/perf/perf_data_writer.h"
#include "src/archive/provenance.h"
#include "src/cli/command.h"
#include "src/cli/input_options.h"
#include "src/pipeline/session.h"

namespace ptprof::cli {

namespace {

// The process and thread id a trace gets when its input does not say (a raw PT file).
constexpr int32_t kDefaultPid = 1000;

struct ExportOptions {
  std::string input;
  std::string perf_data;
  bool force = false;
  std::string images_dir;  // copy the code here and name the copies in the perf.data
  InputOptions in;
};

int UsageError(const std::string& message) {
  std::fprintf(stderr, "ptprof: export: %s\n", message.c_str());
  return kExitUsage;
}

std::string Basename(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// The executable mappings of every image, named by the path the binary had when it was traced
// (for a .ptar: where it was on the recording machine), with the offset into that file.
// With an images directory, every mapping is named by a copy of its bytes in that directory
// (`imageK-ADDRESS.bin`, page offset 0), so that perf finds code whose original file is gone
// (a .ptar's images, QEMU's translated code).
Result<std::vector<perf::PerfMapping>> Mappings(const Session& session, const std::string& images_dir) {
  std::vector<perf::PerfMapping> out;
  std::set<std::tuple<std::string, uint64_t, uint64_t>> seen;
  for (size_t k = 0; k < session.manifest.images.size(); ++k) {
    const archive::ImageEntry& image = session.manifest.images[k];
    const ImageSource& source = session.image_sources[k];
    for (const ImageSection& section : session.images.sections()) {
      if (section.file != source.file || section.file_offset < source.offset) continue;
      if (!seen.insert({section.file, section.address, section.file_offset}).second) continue;
      perf::PerfMapping m;
      m.address = section.address;
      m.length = section.size;
      m.pgoff = section.file_offset - source.offset +
                (image.kind == archive::ImageEntry::Kind::kRaw ? image.file_offset : 0);
      m.filename = image.path;
      if (!images_dir.empty()) {
        std::error_code error;
        std::filesystem::create_directories(images_dir, error);
        const std::filesystem::path copy = std::filesystem::absolute(images_dir, error) /
                                           fmt::format("image{}-{:x}.bin", k, section.address);
        std::FILE* f = std::fopen(copy.c_str(), "wb");
        if (!f || std::fwrite(section.bytes.data(), 1, section.bytes.size(), f) != section.bytes.size()) {
          if (f) std::fclose(f);
          return Fail(copy.string() + ": cannot write the image copy");
        }
        if (std::fclose(f) != 0) return Fail(copy.string() + ": cannot write the image copy");
        m.filename = copy.string();
        m.pgoff = 0;
      }
      out.push_back(m);
    }
  }
  return out;
}

// The command line that made the file, for perf's cmdline feature.
std::vector<std::string> CommandLine(const ExportOptions& options) {
  std::vector<std::string> out = {"ptprof", "export", "--perf-data", options.perf_data, options.input};
  size_t elf = 0, raw = 0;
  for (bool is_elf : options.in.image_order) {
    if (is_elf && elf < options.in.elf.size()) out.insert(out.end(), {"--elf", options.in.elf[elf++]});
    if (!is_elf && raw < options.in.raw.size()) out.insert(out.end(), {"--raw", options.in.raw[raw++]});
  }
  if (!options.images_dir.empty()) out.insert(out.end(), {"--images-dir", options.images_dir});
  if (!options.in.cpu.empty()) out.insert(out.end(), {"--cpu", options.in.cpu});
  auto number = [&](const char* name, const std::optional<uint64_t>& value) {
    if (value) out.insert(out.end(), {name, std::to_string(*value)});
  };
  number("--mtc-freq", options.in.mtc_freq);
  number("--nom-freq", options.in.nom_freq);
  number("--cpuid-0x15.eax", options.in.cpuid_0x15_eax);
  number("--cpuid-0x15.ebx", options.in.cpuid_0x15_ebx);
  return out;
}

Result<perf::PerfDataDescription> Describe(const Session& session, std::vector<std::string> cmdline,
                                           const std::string& images_dir) {
  perf::PerfDataDescription d;
  const pt::PtParams& params = session.params();
  const auto& config = session.manifest.pt_config;
  using Bits = perf::IntelPtConfigBits;

  bool has_tsc = false, has_mtc = false, has_cyc = false;
  uint64_t first_tsc = UINT64_MAX, last_tsc = 0;
  for (size_t i = 0; i < session.stream_bytes.size(); ++i) {
    if (session.stream_bytes[i].empty()) continue;
    auto census = pt::TakeCensus(session.stream_bytes[i], params);
    if (!census) return Fail(session.input + ": stream " + session.manifest.streams[i].name + ": " +
                             census.error().message);
    has_tsc |= census->has_tsc;
    has_mtc |= census->packets_by_kind.count("mtc") > 0;
    has_cyc |= census->packets_by_kind.count("cyc") > 0;
    if (census->has_tsc) {
      first_tsc = std::min(first_tsc, census->first_tsc);
      last_tsc = std::max(last_tsc, census->last_tsc);
    }
  }
  auto configured = [&](const char* name, bool seen) {
    auto it = config.find(name);
    return it != config.end() ? it->second != 0 : seen;
  };
  d.config = uint64_t{1} << Bits::kBranch;
  // perf's decoder never starts a queue whose first timestamp is 0 (an emulated trace's TSC may
  // start there): such a trace is exported for timeless decoding, tsc off.
  if (configured("tsc", has_tsc) && !(has_tsc && first_tsc == 0)) d.config |= uint64_t{1} << Bits::kTsc;
  if (configured("mtc", has_mtc)) d.config |= uint64_t{1} << Bits::kMtc;
  if (configured("cyc", has_cyc)) d.config |= uint64_t{1} << Bits::kCyc;
  if (configured("noretcomp", false)) d.config |= uint64_t{1} << Bits::kNoRetComp;
  d.config |= uint64_t{params.mtc_freq & 0xfu} << Bits::kMtcPeriod;
  if (auto it = config.find("psb_period"); it != config.end()) d.config |= (it->second & 0xf) << Bits::kPsbPeriod;
  if (auto it = config.find("cyc_thresh"); it != config.end()) d.config |= (it->second & 0xf) << Bits::kCycThresh;

  perf::IntelPtInfo& info = d.pt_info;
  info.pmu_type = perf::kExportIntelPtPmuType;
  perf::PerfClock clock{0, 1, 0};  // without perf's clock, perf time is the TSC
  if (session.manifest.clock && session.manifest.clock->time_mult != 0)
    clock = {session.manifest.clock->time_shift, session.manifest.clock->time_mult,
             session.manifest.clock->time_zero};
  info.time_shift = clock.time_shift;
  info.time_mult = clock.time_mult;
  info.time_zero = clock.time_zero;
  info.cap_user_time_zero = true;
  info.tsc_bit = uint64_t{1} << Bits::kTsc;
  info.noretcomp_bit = uint64_t{1} << Bits::kNoRetComp;
  info.mtc_bit = uint64_t{1} << Bits::kMtc;
  info.mtc_freq_bits = uint64_t{0xf} << Bits::kMtcPeriod;
  info.cyc_bit = uint64_t{1} << Bits::kCyc;
  info.tsc_ctc_ratio_n = params.cpuid_0x15_ebx;
  info.tsc_ctc_ratio_d = params.cpuid_0x15_eax;
  info.max_non_turbo_ratio = params.nom_freq;
  if (has_tsc) {
    d.start_time = clock.TscToPerfTime(first_tsc);
    d.end_time = clock.TscToPerfTime(last_tsc) + 1;
  } else {
    d.start_time = 1;
    d.end_time = 2;
  }

  auto mapped = Mappings(session, images_dir);
  if (!mapped) return tl::unexpected(mapped.error());
  const auto& mappings = *mapped;
  const std::string comm = session.manifest.images.empty() ? "ptprof-trace"
                                                           : Basename(session.manifest.images.front().path);
  for (size_t i = 0; i < session.manifest.streams.size(); ++i) {
    const archive::StreamEntry& stream = session.manifest.streams[i];
    if (stream.format != "intel_pt")
      return Fail(session.input + ": stream " + stream.name + " is " + stream.format +
                  ": only intel_pt streams can be exported to perf.data");
    const int32_t tid = stream.tid != kUnknownId ? stream.tid
                        : stream.pid != kUnknownId ? stream.pid
                                                   : kDefaultPid + static_cast<int32_t>(i);
    const int32_t pid = stream.pid != kUnknownId ? stream.pid : tid;
    const int32_t cpu = stream.cpu != kUnknownId ? stream.cpu : 0;
    bool known = false;
    for (const auto& t : d.threads) known |= t.tid == tid;
    if (!known) d.threads.push_back({pid, tid, cpu, comm, mappings});
    d.buffers.push_back({static_cast<uint32_t>(i), tid, cpu, session.stream_bytes[i]});
  }
  for (const auto& image : session.manifest.images)
    if (images_dir.empty() && image.kind == archive::ImageEntry::Kind::kElf && !image.build_id.empty())
      d.build_ids.push_back({-1, 2 /* PERF_RECORD_MISC_USER */, image.build_id, image.path});

  if (params.cpu)
    d.cpuid = fmt::format("GenuineIntel,{},{},{}", params.cpu->family, params.cpu->model, params.cpu->stepping);
  d.hostname = archive::HostName();
  struct utsname uts {};
  if (uname(&uts) == 0) d.osrelease = uts.release;
  d.version = std::string("ptprof ") + PTPROF_VERSION;
  d.cmdline = std::move(cmdline);
  return d;
}

int RunExport(const ExportOptions& options) {
  auto parsed = options.in.ToRawInput();
  if (!parsed) return UsageError(parsed.error().message);
  auto session = OpenSession(options.input, *parsed, options.in.AnyGiven());
  if (!session) return ReportBadInput(session.error().message);
  auto description = Describe(*session, CommandLine(options), options.images_dir);
  if (!description) return ReportBadInput(description.error().message);
  if (auto st = perf::WritePerfDataFile(*description, options.perf_data, options.force); !st)
    return ReportBadInput(st.error().message);
  size_t bytes = 0;
  for (const auto& b : description->buffers) bytes += b.bytes.size();
  std::printf("%s: intel_pt perf.data with %zu AUX buffer%s (%zu bytes), %zu thread%s, %zu mapping%s\n",
              options.perf_data.c_str(), description->buffers.size(),
              description->buffers.size() == 1 ? "" : "s", bytes, description->threads.size(),
              description->threads.size() == 1 ? "" : "s",
              description->threads.empty() ? size_t{0} : description->threads.front().mappings.size(),
              description->threads.empty() || description->threads.front().mappings.size() == 1 ? "" : "s");
  return kExitOk;
}

}  // namespace

Command AddExportCommand(CLI::App& parent) {
  auto options = std::make_shared<ExportOptions>();
  CLI::App* app = parent.add_subcommand(
      "export", "Write a trace in another tool's format: --perf-data (see docs/export.md)");
  app->add_option("input", options->input, "raw Intel PT trace file, or a .ptar")->required();
  app->add_option("--perf-data", options->perf_data, "write an intel_pt perf.data file for Linux perf")
      ->required();
  app->add_flag("--force", options->force, "replace an existing output file");
  app->add_option("--images-dir", options->images_dir,
                  "copy the code of every mapping into this directory and name the copies in the "
                  "perf.data (for a .ptar, whose binaries may not exist here)");
  AddImageOptions(*app, options->in);
  AddPtOptions(*app, options->in);
  return {app, [options, app] {
            options->in.RecordImageOrder(*app);
            return RunExport(*options);
          }};
}

}  // namespace ptprof::cli
