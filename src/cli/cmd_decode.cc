// ptprof decode: the instruction flow of an Intel PT trace (raw, perf.data or .ptar; every stream or
// those --stream names, merged by time), as blocks (default) or instructions, in text (with
// symbols and disassembly) or JSON Lines. The ptxed-compatible format (`--format ptxed`) has its
// own front end in ptxed_compat.cc.
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
#include "src/cli/decode_branches.h"
#include "src/cli/flow_window_options.h"
#include "src/cli/etm_archive.h"
#include "src/cli/etm_perf_data.h"
#include "src/cli/etm_snapshot.h"
#include "src/cli/input_options.h"
#include "src/analyses/flow_stats.h"
#include "src/pipeline/decode_streams.h"
#include "src/pipeline/fanout_sink.h"
#include "src/pipeline/input_kind.h"
#include "src/report/event_writer.h"

namespace ptprof::cli {

namespace {

struct DecodeOptions {
  std::string input;
  std::string pt;
  InputOptions in;
  bool insn = false;
  bool blocks = false;
  bool ticks = false;
  bool summary = false;
  bool branches = false;     // --branches: branch records (decode_branches.cc)
  uint32_t lbr_depth = 16;  // --lbr-depth: records per pseudo-sample of a flow
  bool verbose = false;  // how each stream was decoded (parallel segments, or why sequential)
  std::string format = "text";
  WindowOptions window;  // --interval / --around (flow_window_options.h)
  bool etm_src_addr_n = false;  // CoreSight snapshots: ETE/ETMv4 ranges split at N atoms
};

int UsageError(const std::string& message) {
  std::fprintf(stderr, "ptprof: decode: %s\n", message.c_str());
  return kExitUsage;
}

int RunDecode(const DecodeOptions& options) {
  if (options.input.empty() == options.pt.empty())
    return UsageError("give the trace once, as an argument or with --pt");
  const std::string& trace_file = options.pt.empty() ? options.input : options.pt;
  if (options.branches) {
    auto raw = options.in.ToRawInput();
    if (!raw) return UsageError(raw.error().message);
    return RunDecodeBranches({trace_file, *raw, options.in.AnyGiven(), options.in.streams,
                              options.format, options.lbr_depth, options.verbose});
  }
  if (auto kind = ClassifyPath(trace_file); kind && *kind == InputKind::kPtar) {
    auto etm = RestoreEtmArchive(trace_file);  // a .ptar of a CoreSight input: etm_archive.cc
    if (!etm) return ReportBadInput(etm.error().message);
    if (*etm && (*etm)->kind == kCoreSightSnapshotSource)
      return RunSnapshotDecode({(*etm)->path, options.format, options.in.streams, options.insn,
                                options.etm_src_addr_n, options.verbose});
    if (*etm)
      if (auto status = RunPerfEtmDecode({(*etm)->path, options.format, options.in.streams,
                                          options.insn, (*etm)->symfs, (*etm)->symfs,
                                          options.verbose}))
        return *status;
  }
  if (auto kind = ClassifyPath(trace_file); kind && *kind == InputKind::kCoreSightSnapshot)
    return RunSnapshotDecode({trace_file, options.format, options.in.streams, options.insn,
                              options.etm_src_addr_n, options.verbose});  // etm_snapshot.cc
  else if (kind && (*kind == InputKind::kPerfData || *kind == InputKind::kPerfDataPipe))
    if (auto status = RunPerfEtmDecode({trace_file, options.format, options.in.streams, options.insn,
                                        options.in.symfs, options.in.buildid_dir, options.verbose}))
      return *status;  // a cs_etm perf.data: etm_perf_data.cc

  auto raw = options.in.ToRawInput();
  if (!raw) return UsageError(raw.error().message);
  auto session = OpenSession(trace_file, *raw, options.in.AnyGiven());
  if (!session) return ReportBadInput(session.error().message);
  for (const std::string& warning : session->warnings)
    std::fprintf(stderr, "ptprof: warning: %s\n", warning.c_str());
  auto selected = SelectStreams(*session, options.in.streams);
  if (!selected) return ReportBadInput(selected.error().message);
  const ImageSet& images = session->images;

  X86Decoder x86;
  EventWriterOptions writer_options;
  writer_options.format = options.format == "jsonl" ? EventFormat::kJsonl : EventFormat::kText;
  writer_options.show_cpu = selected->size() > 1;
  writer_options.symbolize = [&images](uint64_t ip) { return images.Symbolize(ip); };
  writer_options.disassemble = [&x86](const Instruction& insn) {
    auto text = x86.Format(insn.bytes, insn.size, insn.mode, insn.ip);
    return text ? *text : std::string();
  };
  EventWriter writer(stdout, writer_options);
  FlowStats stats([&images](uint64_t ip) {
    const Symbol* symbol = images.symbols().Find(ip);
    return symbol ? images.symbols().ShownName(*symbol) : std::string();
  });
  std::unique_ptr<delta::FlowWindow> window;
  if (int status = MakeFlowWindow(options.window, *session, *selected, trace_file, writer, window))
    return status;
  std::vector<EventSink*> sinks = {window ? static_cast<EventSink*>(window.get()) : &writer};
  if (options.summary) sinks.push_back(&stats);
  // On several threads the writer and the summary take the stream in parts (a window does not).
  std::unique_ptr<EventSink> fanout_sink = MakeFanoutSink(sinks);
  EventSink& fanout = *fanout_sink;

  // The streams merged by time. A raw trace is one stream whose failures are the input's; a
  // stream of a multi-stream input that cannot be decoded is a warning and the others go on.
  DecodeStreamsOptions decode_options;
  decode_options.insns = options.insn;
  decode_options.ticks = options.ticks;
  const auto outcomes = DecodeStreams(*session, *selected, decode_options, fanout);
  for (const StreamOutcome& outcome : outcomes) {
    const archive::StreamEntry& stream = session->manifest.streams[outcome.stream];
    const bool named = stream.name != "raw";
    const std::string where = named ? trace_file + ": stream " + stream.name : trace_file;
    if (!outcome.summary) {
      if (!named) return ReportBadInput(where + ": " + outcome.error);
      std::fprintf(stderr, "ptprof: warning: %s: %s\n", where.c_str(), outcome.error.c_str());
      continue;
    }
    const pt::FlowSummary& summary = *outcome.summary;
    for (const std::string& warning : summary.warnings)
      std::fprintf(stderr, "ptprof: warning: %s\n", warning.c_str());
    if (options.verbose)
      std::fprintf(stderr, "ptprof: %s: %s\n", where.c_str(), DescribeDecode(summary).c_str());
    if (options.verbose && (summary.fast_segments || summary.libipt_segments))
      std::fprintf(stderr, "ptprof: %s: fast engine: %" PRIu64 " segment%s, libipt: %" PRIu64 "%s%s\n",
                   where.c_str(), summary.fast_segments, summary.fast_segments == 1 ? "" : "s",
                   summary.libipt_segments, summary.fallback_because.empty() ? "" : "; first: ",
                   summary.fallback_because.c_str());
    else if (options.verbose && !summary.fallback_because.empty())
      std::fprintf(stderr, "ptprof: %s: %s\n", where.c_str(), summary.fallback_because.c_str());
    if (!summary.has_psb) {
      if (!named)
        return ReportBadInput(where + ": offset 0x0: no PSB found: not an Intel PT trace");
      std::fprintf(stderr, "ptprof: warning: %s: offset 0x0: no PSB found\n", where.c_str());
      continue;
    }
    if (outcome.first_gap) {
      std::fprintf(stderr, "ptprof: warning: %s: offset 0x%" PRIx64 ": %s (%" PRIu64
                   " gap%s in the decode)\n",
                   where.c_str(), outcome.first_gap_offset, outcome.first_gap->detail.c_str(),
                   summary.gaps, summary.gaps == 1 ? "" : "s");
    }
  }
  fanout.OnEnd();
  if (options.summary) {
    if (writer_options.format == EventFormat::kJsonl)
      stats.WriteJson(stdout);
    else
      stats.WriteText(stdout);
  }
  return kExitOk;
}

}  // namespace

Command AddDecodeCommand(CLI::App& parent) {
  auto options = std::make_shared<DecodeOptions>();
  CLI::App* app = parent.add_subcommand(
      "decode", "Decode the instruction flow of an Intel PT trace (blocks or instructions)");
  app->add_option("input", options->input, "raw Intel PT trace, perf.data or .ptar");
  app->add_option("--pt", options->pt, "raw Intel PT trace file (instead of the argument)");
  AddImageOptions(*app, options->in);
  AddPtOptions(*app, options->in);
  AddAddrFilterOption(*app, options->in);
  AddStreamOption(*app, options->in);
  AddBinarySearchOptions(*app, options->in);
  auto* insn = app->add_flag("--insn", options->insn, "one record per instruction");
  auto* blocks = app->add_flag("--blocks", options->blocks, "one record per block (default)");
  insn->excludes(blocks);
  app->add_flag("--etm-src-addr-n", options->etm_src_addr_n,
                "CoreSight: split ETE/ETMv4 ranges at not-taken branches (trc_pkt_lister -src_addr_n)");
  AddWindowOptions(*app, options->window);
  app->add_flag("--ticks", options->ticks, "report timing packets as tick events (at the IP)");
  app->add_flag("--branches", options->branches,
                "branch records: LBR samples, swbt bursts, or a flow's taken branches (docs/decode.md)");
  app->add_option("--lbr-depth", options->lbr_depth,
                  "--branches of a flow: records per pseudo-sample (default 16; 0: one per unbroken run)");
  app->add_flag("--summary", options->summary,
                "after the flow, a summary: instructions, blocks, gaps, exits, top functions");
  app->add_flag("--verbose", options->verbose,
                "say how each stream was decoded: in how many PSB segments, or why sequentially");
  app->add_option("--format", options->format,
                  "text, jsonl, or ptxed (libipt ptxed's options and output; see docs/decode.md)")
      ->check(CLI::IsMember({"text", "jsonl"}));
  return {app, [options, app] {
            options->in.RecordImageOrder(*app);
            return RunDecode(*options);
          }};
}

}  // namespace ptprof::cli
