#include "src/cli/decode_branches.h"

#include <cstdio>
#include <functional>
#include <string>

#include "src/analyses/crossval/branch_inputs.h"
#include "src/cli/command.h"
#include "src/pipeline/decode_streams.h"
#include "src/report/branch_sample_writer.h"
#include "src/report/branch_text.h"

namespace ptprof::cli {

namespace {

// The samples of a branch-record input, one string per sample.
void PrintSample(const BranchSample& s, bool jsonl, const std::function<std::string(uint64_t)>& symbolize) {
  std::string out;
  if (!jsonl) {
    AppendSampleHeader(out, {s.sample, s.pid, s.tid, s.cpu, s.time_ns, s.trace_offset, s.branches.size()});
    for (const BranchRecord& r : s.branches) AppendRecordText(out, r, symbolize);
  } else {
    for (const BranchRecord& r : s.branches) {
      AppendRecordJsonHead(out, r);
      AppendRecordJsonTail(out, s.sample, r);
    }
  }
  std::fwrite(out.data(), 1, out.size(), stdout);
}

int RunFlowBranches(const DecodeBranchesOptions& options) {
  auto session = OpenSession(options.input, options.raw, options.options_given);
  if (!session) return ReportBadInput(session.error().message);
  for (const std::string& warning : session->warnings)
    std::fprintf(stderr, "ptprof: warning: %s\n", warning.c_str());
  auto selected = SelectStreams(*session, options.streams);
  if (!selected) return ReportBadInput(selected.error().message);
  const ImageSet& images = session->images;
  // The taken branches in pseudo-samples, formatted in parts on several threads (--jobs).
  BranchSampleWriter sink(stdout, {options.format == "jsonl", options.lbr_depth,
                                   [&images](uint64_t ip) { return images.Symbolize(ip); }});
  const auto outcomes = DecodeStreams(*session, *selected, {}, sink);
  sink.OnEnd();
  for (const StreamOutcome& outcome : outcomes) {
    const std::string& name = session->manifest.streams[outcome.stream].name;
    if (options.verbose && outcome.summary)
      std::fprintf(stderr, "ptprof: %s%s%s: %s\n", options.input.c_str(), name == "raw" ? "" : ": stream ",
                   name == "raw" ? "" : name.c_str(), DescribeDecode(*outcome.summary).c_str());
    if (!outcome.summary) {
      if (name == "raw") return ReportBadInput(options.input + ": " + outcome.error);
      std::fprintf(stderr, "ptprof: warning: %s: stream %s: %s\n", options.input.c_str(), name.c_str(),
                   outcome.error.c_str());
    } else if (!outcome.summary->has_psb && name == "raw") {
      return ReportBadInput(options.input + ": offset 0x0: no PSB found: not an Intel PT trace");
    }
  }
  return kExitOk;
}

}  // namespace

int RunDecodeBranches(const DecodeBranchesOptions& options) {
  auto input = OpenBranchInput(options.input, {options.raw.symfs, options.raw.buildid_dir});
  if (!input) return ReportBadInput(input.error().message);
  if (!*input) return RunFlowBranches(options);
  const BranchInput& in = **input;
  for (const std::string& warning : in.warnings) std::fprintf(stderr, "ptprof: warning: %s\n", warning.c_str());
  const auto symbolize = [&in](uint64_t ip) { return in.images.Symbolize(ip); };
  for (const BranchSample& s : in.samples) PrintSample(s, options.format == "jsonl", symbolize);
  return kExitOk;
}

}  // namespace ptprof::cli
