#include "src/cli/decode_branches.h"

#include <cstdio>
#include <map>
#include <vector>

#include <fmt/format.h>

#include "src/analyses/crossval/branch_inputs.h"
#include "src/analyses/crossval/flow_branches.h"
#include "src/cli/command.h"
#include "src/pipeline/decode_streams.h"

namespace ptprof::cli {

namespace {

class BranchPrinter {
 public:
  BranchPrinter(bool jsonl, std::function<std::string(uint64_t)> symbolize)
      : jsonl_(jsonl), symbolize_(std::move(symbolize)) {}

  void Print(const BranchSample& s) {
    if (!jsonl_)
      fmt::print("sample {}: pid {} tid {}{}{} offset {:#x}, {} records\n", s.sample, s.pid, s.tid,
                 s.cpu >= 0 ? fmt::format(" cpu {}", s.cpu) : "",
                 s.time_ns ? fmt::format(" time {}", s.time_ns) : "", s.trace_offset, s.branches.size());
    for (const BranchRecord& r : s.branches) {
      if (jsonl_) {
        std::string line = fmt::format("{{\"from\":\"{:#x}\",\"to\":\"{:#x}\",\"sample\":{}", r.from, r.to, s.sample);
        if (r.has_cycles) line += fmt::format(",\"cycles\":{}", r.cycles);
        if (r.has_mispred) line += fmt::format(",\"mispred\":{}", r.mispred ? "true" : "false");
        fmt::print("{}}}\n", line);
        continue;
      }
      std::string from = symbolize_(r.from), to = symbolize_(r.to);
      std::string line = fmt::format("  {:#x} -> {:#x}", r.from, r.to);
      if (!from.empty() || !to.empty())
        line += fmt::format("  {} -> {}", from.empty() ? "?" : from, to.empty() ? "?" : to);
      if (r.has_mispred) line += r.mispred ? "  mispred" : "  pred";
      if (r.has_cycles) line += fmt::format("  cycles {}", r.cycles);
      fmt::print("{}\n", line);
    }
  }

 private:
  bool jsonl_;
  std::function<std::string(uint64_t)> symbolize_;
};

int RunFlowBranches(const DecodeBranchesOptions& options) {
  auto session = OpenSession(options.input, options.raw, options.options_given);
  if (!session) return ReportBadInput(session.error().message);
  for (const std::string& warning : session->warnings)
    std::fprintf(stderr, "ptprof: warning: %s\n", warning.c_str());
  auto selected = SelectStreams(*session, options.streams);
  if (!selected) return ReportBadInput(selected.error().message);
  const ImageSet& images = session->images;
  BranchPrinter printer(options.format == "jsonl", [&images](uint64_t ip) { return images.Symbolize(ip); });
  std::map<int64_t, BranchSample> open;  // per thread, the pseudo-sample being filled
  uint64_t next_sample = 0;
  auto emit = [&](BranchSample& s) {
    if (s.branches.empty()) return;
    s.sample = next_sample++;
    printer.Print(s);
    s.branches.clear();
  };
  FlowBranches sink(
      [&](const FlowBranchSite& site, const BranchRecord& r) {
        BranchSample& s = open[site.thread];
        if (s.branches.empty()) {
          s.pid = site.pid < 0 ? 0 : static_cast<uint32_t>(site.pid);
          s.tid = site.thread < 0 ? 0 : static_cast<uint32_t>(site.thread);
          s.cpu = site.cpu;
          s.time_ns = site.time_ns;
          s.trace_offset = site.offset;
        }
        s.branches.push_back(r);
        if (options.lbr_depth && s.branches.size() == options.lbr_depth) emit(s);
      },
      [&](int64_t thread) {
        if (auto it = open.find(thread); it != open.end()) emit(it->second);
      });
  const auto outcomes = DecodeStreams(*session, *selected, {}, sink);
  sink.OnEnd();
  for (const StreamOutcome& outcome : outcomes) {
    const std::string& name = session->manifest.streams[outcome.stream].name;
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
  BranchPrinter printer(options.format == "jsonl", [&in](uint64_t ip) { return in.images.Symbolize(ip); });
  for (const BranchSample& s : in.samples) printer.Print(s);
  return kExitOk;
}

}  // namespace ptprof::cli
