// ptprof dump: the Intel PT packets of a trace (raw PT, perf.data, .ptar; every stream or those
// --stream names, one after another), as text or JSON Lines. The ptdump-compatible
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
#include "src/cli/etm_perf_data.h"
#include "src/cli/etm_snapshot.h"
#include "src/cli/input_options.h"
#include "src/pipeline/input_kind.h"
#include "src/pipeline/session.h"

namespace ptprof::cli {

namespace {

struct DumpOptions {
  std::string input;
  std::string format = "text";
  InputOptions in;  // the PT parameters only: packets need no images
};

int UsageError(const std::string& message) {
  std::fprintf(stderr, "ptprof: dump: %s\n", message.c_str());
  return kExitUsage;
}

// `{"offset":...` with the stream named first: `{"stream":"cpu0","offset":...`.
void AddStreamField(std::string_view line, const std::string& field, std::string& out) {
  if (!line.empty() && line[0] == '{') {
    out += '{';
    out += field;
    out.append(line.substr(1));
  } else {
    out.append(line);
  }
}

int RunDump(const DumpOptions& options) {
  if (auto kind = ClassifyPath(options.input); kind && *kind == InputKind::kCoreSightSnapshot)
    return RunSnapshotDump({options.input, options.format, options.in.streams, false, false});
  else if (kind && (*kind == InputKind::kPerfData || *kind == InputKind::kPerfDataPipe))
    if (auto status = RunPerfEtmDump({options.input, options.format, options.in.streams, false, "", ""}))
      return *status;  // a cs_etm perf.data: etm_perf_data.cc
  auto raw = options.in.ToRawInput();
  if (!raw) return UsageError(raw.error().message);
  raw->load_images = false;  // packets need no binaries
  const auto format = options.format == "jsonl" ? pt::ListingFormat::kJsonl
                                                : pt::ListingFormat::kText;
  auto session = OpenSession(options.input, *raw, options.in.AnyGiven());
  if (!session) return ReportBadInput(session.error().message);
  for (const std::string& warning : session->warnings)
    std::fprintf(stderr, "ptprof: warning: %s\n", warning.c_str());
  auto selected = SelectStreams(*session, options.in.streams);
  if (!selected) return ReportBadInput(selected.error().message);
  const pt::PtParams& params = session->params();

  std::string pending;
  auto flush = [&pending] {
    std::fwrite(pending.data(), 1, pending.size(), stdout);
    pending.clear();
  };
  // A raw trace is one unnamed stream: its listing stays as it always was. Streams with names
  // (perf.data, multi-stream archives) are listed one after another, each record naming its stream.
  for (size_t index : *selected) {
    const std::string& name = session->manifest.streams[index].name;
    const bool named = name != "raw";
    const std::string where = named ? options.input + ": stream " + name : options.input;
    const std::string field = "\"stream\":\"" + name + "\",";
    if (named && format == pt::ListingFormat::kText)
      pending += "# stream " + name + " (" +
                 std::to_string(session->stream_bytes[index].size()) + " bytes)\n";
    pt::PacketListing listing(params, format, [&](std::string_view text) {
      if (named && format == pt::ListingFormat::kJsonl) {
        // The listing hands over whole lines; each JSON record gets the stream's name.
        size_t start = 0;
        while (start < text.size()) {
          size_t end = text.find('\n', start);
          end = end == std::string_view::npos ? text.size() : end + 1;
          AddStreamField(text.substr(start, end - start), field, pending);
          start = end;
        }
      } else {
        pending += text;
      }
      if (pending.size() >= (1u << 16)) flush();
    });
    auto summary = listing.List(session->stream_bytes[index]);
    flush();
    std::fflush(stdout);
    if (!summary) {
      if (!named) return ReportBadInput(where + ": " + summary.error().message);
      std::fprintf(stderr, "ptprof: warning: %s: %s\n", where.c_str(),
                   summary.error().message.c_str());
      continue;
    }
    const uint64_t errors = summary->gaps - (summary->truncated ? 1 : 0);
    if (errors != 0)
      std::fprintf(stderr,
                   "ptprof: warning: %s: %llu decode error(s); %llu byte(s) skipped to "
                   "resynchronise\n",
                   where.c_str(), static_cast<unsigned long long>(errors),
                   static_cast<unsigned long long>(summary->skipped_bytes));
    if (summary->truncated)
      std::fprintf(stderr, "ptprof: warning: %s: offset %#llx: the trace ends inside a packet\n",
                   where.c_str(), static_cast<unsigned long long>(summary->truncated_at));
  }
  return kExitOk;
}

}  // namespace

Command AddDumpCommand(CLI::App& parent) {
  auto options = std::make_shared<DumpOptions>();
  CLI::App* app = parent.add_subcommand(
      "dump", "List the Intel PT packets of a trace (see docs/dump.md)");
  app->add_option("input", options->input, "raw Intel PT trace, perf.data or .ptar")->required();
  app->add_option("--format", options->format,
                  "text (default), jsonl, or ptdump (libipt 2.0.5 ptdump's exact listing; takes "
                  "ptdump's options, see 'ptprof dump --format ptdump --help')")
      ->check(CLI::IsMember({"text", "jsonl"}));
  AddPtOptions(*app, options->in);
  AddStreamOption(*app, options->in);
  return {app, [options] { return RunDump(*options); }};
}

}  // namespace ptprof::cli
