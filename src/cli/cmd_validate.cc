// ptprof validate A B: cross-validates a decoded PT flow (A) against recorded branch records of the
// same program (B: hardware LBR in a perf.data, or a software branch tracer .ptar): path
// consistency and profile similarity (src/analyses/crossval; docs/validate.md).
#include <cstdio>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "src/analyses/crossval/branch_inputs.h"
#include "src/analyses/crossval/cross_validate.h"
#include "src/analyses/crossval/validate_report.h"
#include "src/cli/command.h"
#include "src/cli/input_options.h"
#include "src/pipeline/decode_streams.h"

namespace ptprof::cli {

namespace {

struct ValidateOptions {
  std::string a, b;
  std::string symfs, buildid_dir;
  std::string format = "text";
  size_t examples = 5;
  size_t top = 10;
  bool verbose = false;
};

std::string Join(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out.empty() ? "none" : out;
}

int RunValidate(const ValidateOptions& options) {
  RawInputOptions raw;
  raw.symfs = options.symfs;
  raw.buildid_dir = options.buildid_dir;
  auto b = OpenBranchInput(options.b, {options.symfs, options.buildid_dir});
  if (!b) return ReportBadInput(b.error().message);
  if (!*b)
    return ReportBadInput(options.b + ": holds no branch records (expected a perf.data with branch "
                          "stacks or a .ptar of `ptprof record --backend swbt`)");
  if (auto a_records = OpenBranchInput(options.a, {}); a_records && *a_records)
    return ReportBadInput(options.a + ": holds branch records, not a PT trace; give the trace first");
  auto session = OpenSession(options.a, raw, !options.symfs.empty() || !options.buildid_dir.empty());
  if (!session) return ReportBadInput(session.error().message);
  for (const std::string& w : session->warnings) std::fprintf(stderr, "ptprof: warning: %s\n", w.c_str());
  for (const std::string& w : (*b)->warnings) std::fprintf(stderr, "ptprof: warning: %s\n", w.c_str());
  auto selected = SelectStreams(*session, {});
  if (!selected) return ReportBadInput(selected.error().message);

  AddressNormaliser a_normaliser;
  a_normaliser.AddSessionImages(*session);
  const ImageSet& a_images = session->images;
  CrossValidator validator({options.examples, options.top}, a_normaliser,
                           [&a_images](uint64_t ip) { return a_images.Symbolize(ip); });
  validator.Expect((*b)->samples, (*b)->normaliser);
  const auto outcomes = DecodeStreams(*session, *selected, {}, validator.flow());
  validator.flow().OnEnd();
  for (const StreamOutcome& outcome : outcomes) {
    if (outcome.summary && options.verbose)
      std::fprintf(stderr, "ptprof: %s: stream %s: %s\n", options.a.c_str(),
                   session->manifest.streams[outcome.stream].name.c_str(),
                   DescribeDecode(*outcome.summary).c_str());
    if (!outcome.summary)
      return ReportBadInput(fmt::format("{}: stream {}: {}", options.a,
                                        session->manifest.streams[outcome.stream].name, outcome.error));
  }

  CrossValidation result = validator.Validate((*b)->images);
  if (result.flow_branches == 0) return ReportBadInput(options.a + ": the flow holds no taken branches");
  if (result.bursts_mapped == 0 && result.bursts > result.empty)
    return ReportBadInput(fmt::format(
        "{}: 0% of {} bursts map into the files {} executes ({}); the bursts lie in {}: "
        "branch records of another program?",
        options.b, result.bursts - result.empty, options.a, Join(result.images_a), Join(result.images_b)));
  ValidateInputs inputs{options.a, options.b, (*b)->kind};
  if (options.format == "json")
    std::printf("%s\n", ValidateJson(inputs, result).dump(2).c_str());
  else
    WriteValidateText(stdout, inputs, result);
  return kExitOk;
}

}  // namespace

Command AddValidateCommand(CLI::App& parent) {
  auto options = std::make_shared<ValidateOptions>();
  CLI::App* app = parent.add_subcommand(
      "validate", "Cross-validate a PT trace against branch records (LBR perf.data, swbt .ptar) of the same program");
  app->add_option("A", options->a, "the trace: .ptar, perf.data with intel_pt")->required();
  app->add_option("B", options->b, "branch records: perf.data with branch stacks or a swbt .ptar")->required();
  app->add_option("--symfs", options->symfs, "perf.data inputs: root the recorded binary paths are under");
  app->add_option("--buildid-dir", options->buildid_dir, "perf.data inputs: perf's build-id cache");
  app->add_option("--examples", options->examples, "counterexamples to list (default 5)");
  app->add_option("--top", options->top, "functions in the per-function table (default 10)");
  app->add_flag("--verbose", options->verbose,
                "say how each PT stream was decoded: in how many PSB segments, how many of them "
                "collected in parts on the decoding threads, or why sequentially");
  AddFlowDecodeOptions(*app);
  app->add_option("--format", options->format, "text or json")->check(CLI::IsMember({"text", "json"}));
  return {app, [options] { return RunValidate(*options); }};
}

}  // namespace ptprof::cli
