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
#include "src/cli/etm_archive.h"
#include "src/cli/input_options.h"
#include "src/pipeline/session.h"
#include "src/pipeline/session_archive.h"

namespace ptprof::cli {

namespace {

struct ArchiveOptions {
  std::string input;
  std::string output;
  bool force = false;
  InputOptions in;
  std::string kallsyms;
};

int UsageError(const std::string& message) {
  std::fprintf(stderr, "ptprof: archive: %s\n", message.c_str());
  return kExitUsage;
}

int RunArchive(const ArchiveOptions& options) {
  auto parsed = options.in.ToRawInput();
  if (!parsed) return UsageError(parsed.error().message);
  RawInputOptions raw = std::move(*parsed);
  raw.kallsyms = options.kallsyms;
  if (raw.params.cpu_auto)
    std::fprintf(stderr, "ptprof: warning: --cpu auto is stored as 'auto': a decode elsewhere "
                         "uses that machine's CPU; give FAMILY/MODEL[/STEPPING] instead\n");

  // CoreSight inputs are stored as the files their decoders read: etm_archive.cc.
  auto kind = ClassifyPath(options.input);
  if (kind && (*kind == InputKind::kCoreSightSnapshot ||
               ((*kind == InputKind::kPerfData || *kind == InputKind::kPerfDataPipe) &&
                IsCsEtmPerfData(options.input)))) {
    EtmArchiveOptions etm;
    etm.output = options.output;
    etm.force = options.force;
    etm.tool = std::string("ptprof ") + PTPROF_VERSION;
    etm.symfs = raw.symfs;
    etm.buildid_dir = raw.buildid_dir;
    const bool snapshot = *kind == InputKind::kCoreSightSnapshot;
    auto summary = snapshot ? WriteSnapshotArchive(options.input, etm)
                            : WritePerfEtmArchive(options.input, etm);
    if (!summary) return ReportBadInput(summary.error().message);
    auto written = archive::ArchiveReader::Open(options.output);
    if (!written) return ReportBadInput(written.error().message);
    if (snapshot)
      std::printf("%s: CoreSight snapshot, %zu files; %zu members, %llu bytes\n",
                  options.output.c_str(), summary->files, written->members().size(),
                  static_cast<unsigned long long>(written->file_size()));
    else
      std::printf("%s: cs_etm perf.data, %zu binar%s (%zu not found); %zu members, %llu bytes\n",
                  options.output.c_str(), summary->binaries, summary->binaries == 1 ? "y" : "ies",
                  summary->missing, written->members().size(),
                  static_cast<unsigned long long>(written->file_size()));
    return kExitOk;
  }

  auto session = OpenSession(options.input, raw, options.in.AnyGiven() || !options.kallsyms.empty());
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
  app->add_option("input", options->input, "raw Intel PT trace, perf.data, CoreSight snapshot directory, or a .ptar")->required();
  app->add_option("-o,--output", options->output, "the archive to write")->required();
  app->add_flag("--force", options->force, "replace an existing output file");
  AddImageOptions(*app, options->in);
  app->add_option("--kallsyms", options->kallsyms, "kernel symbols (a copy of /proc/kallsyms)");
  app->add_option("--symfs", options->in.symfs,
                  "perf.data: look up the recorded binary paths under DIR (instead of /)");
  app->add_option("--buildid-dir", options->in.buildid_dir,
                  "perf.data: perf's build-id cache to find binaries in (default ~/.debug)");
  AddPtOptions(*app, options->in);
  AddAddrFilterOption(*app, options->in);
  return {app, [options, app] {
            options->in.RecordImageOrder(*app);
            return RunArchive(*options);
          }};
}

}  // namespace ptprof::cli
