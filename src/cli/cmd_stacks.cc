// ptprof stacks: the call tree of a decoded flow (docs/stacks.md): all of it, the part below every
// entry into a function (--symbol), the kernel side of one syscall (--syscall), one thread (--tid)
// or one range of the trace (--interval), as indented text, folded stacks (flame-graph input),
// JSON, and a self-contained HTML sunburst (--html). `stacks --diff A B` compares the trees of two
// executions of the same code: a table of the largest differences and the diff sunburst.
#include <cinttypes>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "src/analyses/stackdiff/flow_selection.h"
#include "src/analyses/stackdiff/stack_diff.h"
#include "src/analyses/stackdiff/stack_diff_report.h"
#include "src/analyses/stackdiff/syscall_subtrees.h"
#include "src/analyses/stackdiff/tree_selection.h"
#include "sideband/syscall_table.h"
#include "src/analyses/support/call_stack.h"
#include "src/cli/command.h"
#include "src/cli/delta_run.h"
#include "src/cli/input_options.h"
#include "src/pipeline/decode_streams.h"
#include "src/pipeline/input_kind.h"
#include "src/report/call_tree_json_text.h"
#include "src/report/call_tree_text.h"
#include "src/report/folded_stacks.h"
#include "src/report/stack_diff_json_text.h"
#include "src/report/sunburst_html.h"

namespace ptprof::cli {

namespace {

struct StacksCommandOptions {
  std::string input;
  std::vector<std::string> diff;  // A B
  InputOptions in;
  std::string symbol;
  std::string syscall;
  std::string interval;
  std::optional<int32_t> tid;
  std::string format = "text";
  std::string weight = "insns";
  bool verbose = false;
  std::string html;
  double min_share = 0;
  int depth = 0;
  size_t top = 20;
  double changed_threshold = 1.0;  // percentage points
};

int UsageError(const std::string& message) {
  std::fprintf(stderr, "ptprof: stacks: %s\n", message.c_str());
  return kExitUsage;
}

// Remembers, for every function name the stack builder pushes, whether its code is the kernel's
// (an address in the upper half, as on x86-64 and AArch64), so that the sunburst can colour it.
class KernelNames : public CallStackObserver {
 public:
  void OnPush(const StackLane&, const StackFrame& frame) override {
    if (!frame.node || !frame.function) return;
    // A node is pushed again and again: its name is looked up once it leaves this slot.
    const CallTreeNode*& seen =
        seen_[(reinterpret_cast<uintptr_t>(frame.node) * 0x9e3779b97f4a7c15ull) >> 50];
    if (seen == frame.node) return;
    seen = frame.node;
    kernel_.emplace(frame.node->name, (frame.function >> 63) != 0);
  }
  // In parts: each part's names, taken in stream order (the first push of a name decides).
  std::unique_ptr<CallStackObserver> NewPart() const override {
    return std::make_unique<KernelNames>();
  }
  void Fold(CallStackObserver& part, const PartFold&) override {
    for (const auto& [name, kernel] : static_cast<KernelNames&>(part).kernel_)
      kernel_.emplace(name, kernel);
  }
  std::string ModuleOf(const CallTreeNode& node) const {
    auto it = kernel_.find(node.name);
    if (it == kernel_.end()) return "";
    return it->second ? "kernel" : "user";
  }
  std::map<std::string, bool>& names() { return kernel_; }

 private:
  std::map<std::string, bool> kernel_;
  std::vector<const CallTreeNode*> seen_ = std::vector<const CallTreeNode*>(size_t{1} << 14);
};

// One input's tree, as selected, with what is needed to report it.
struct StackSource {
  std::string input;
  std::string selection;  // e.g. "below every entry into do_sys_openat2 (3 call paths)"
  CallTree tree;
  RepairCounts repairs;
  uint64_t blocks = 0;
  std::string time_unit = "ns";
  std::shared_ptr<KernelNames> kernel_names = std::make_shared<KernelNames>();
};

std::string DescribeSelection(const StacksCommandOptions& options) {
  std::vector<std::string> parts;
  if (options.tid) parts.push_back("thread " + std::to_string(*options.tid));
  if (!options.interval.empty()) parts.push_back("trace range " + options.interval);
  return fmt::format("{}", fmt::join(parts, ", "));
}

// Opens `input` and decodes the selected part of its flow into a call tree. Returns the exit
// status on failure (after reporting it).
int LoadStacks(const StacksCommandOptions& options, const std::string& input, StackSource& out) {
  out.input = input;
  if (auto kind = ClassifyPath(input); kind && *kind == InputKind::kCoreSightSnapshot)
    return ReportBadInput(input + ": a CoreSight snapshot: ptprof stacks reads Intel PT inputs "
                          "(raw PT, perf.data, .ptar)");
  auto raw = options.in.ToRawInput();
  if (!raw) return UsageError(raw.error().message);
  auto session = OpenSession(input, *raw, options.in.AnyGiven());
  if (!session) return ReportBadInput(session.error().message);
  for (const std::string& warning : session->warnings)
    std::fprintf(stderr, "ptprof: warning: %s\n", warning.c_str());
  auto selected = SelectStreams(*session, options.in.streams);
  if (!selected) return ReportBadInput(selected.error().message);

  const ProfileClock clock = ClockFor(*session);
  out.time_unit = clock.unit;
  CallStackOptions stack_options;
  stack_options.symbols = &session->images.symbols();
  if (clock.unit == "ns") {
    stack_options.time_of = [time = clock.time](const EventHeader& h) -> std::optional<uint64_t> {
      auto t = time.TimeOf(h);
      if (!t) return std::nullopt;
      return static_cast<uint64_t>(*t);
    };
  }
  CallStackBuilder builder(stack_options);
  builder.AddObserver(out.kernel_names.get());
  stackdiff::SyscallSubtrees syscalls(options.syscall);
  if (!options.syscall.empty()) builder.AddObserver(&syscalls);

  stackdiff::FlowSelectionSpec spec;
  spec.tid = options.tid;
  if (!options.interval.empty()) {
    auto range = stackdiff::ParseFlowRange(options.interval);
    if (!range) return UsageError(range.error().message);
    if (range->kind == stackdiff::FlowRange::Kind::kTime && clock.unit != "ns")
      return ReportBadInput(input + ": --interval " + options.interval +
                            ": the trace has no time in ns (no nominal frequency); give trace offsets");
    spec.range = *range;
  }
  spec.time_of = clock.time.AsFunction();
  stackdiff::FlowSelection selection(spec, builder);

  const auto outcomes = DecodeStreams(*session, *selected, DecodeStreamsOptions{}, selection);
  for (const StreamOutcome& outcome : outcomes) {
    const archive::StreamEntry& stream = session->manifest.streams[outcome.stream];
    const bool named = stream.name != "raw";
    const std::string where = named ? input + ": stream " + stream.name : input;
    if (outcome.summary && options.verbose)
      std::fprintf(stderr, "ptprof: %s: %s\n", where.c_str(), DescribeDecode(*outcome.summary).c_str());
    if (!outcome.summary) {
      if (!named) return ReportBadInput(where + ": " + outcome.error);
      std::fprintf(stderr, "ptprof: warning: %s: %s\n", where.c_str(), outcome.error.c_str());
    } else if (!outcome.summary->has_psb) {
      if (!named) return ReportBadInput(where + ": offset 0x0: no PSB found: not an Intel PT trace");
      std::fprintf(stderr, "ptprof: warning: %s: offset 0x0: no PSB found\n", where.c_str());
    }
  }
  selection.OnEnd();

  if (selection.blocks_passed() == 0) {
    std::string what = DescribeSelection(options);
    return ReportBadInput(input + ": " + (what.empty() ? std::string("the trace") : what) +
                          " holds no executed instructions (" +
                          std::to_string(selection.events_seen()) + " events decoded)");
  }
  out.tree = builder.TakeMerged();
  out.repairs = builder.repairs();
  out.blocks = builder.blocks();
  out.selection = DescribeSelection(options);

  if (!options.syscall.empty()) {
    if (syscalls.instances() == 0) {
      std::vector<std::string> seen;
      for (const auto& [name, count] : syscalls.seen())
        seen.push_back(name == "?" ? std::to_string(count) + " with no kernel handler in the trace"
                                   : name + " " + std::to_string(count));
      return ReportBadInput(
          input + ": --syscall " + options.syscall + ": no complete instance" +
          (seen.empty() ? std::string(" (no syscall with its kernel side in the trace)")
                        : " (syscalls seen: " + fmt::format("{}", fmt::join(seen, ", ")) + ")"));
    }
    const std::string what = "the kernel side of " + std::to_string(syscalls.instances()) + " " +
                             options.syscall + " syscall" + (syscalls.instances() == 1 ? "" : "s");
    out.selection = out.selection.empty() ? what : out.selection + ", " + what;
    out.tree = syscalls.Tree();
  }
  if (!options.symbol.empty()) {
    stackdiff::Subtrees below = stackdiff::SubtreesBelow(out.tree, options.symbol);
    if (below.positions == 0) {
      size_t functions = out.kernel_names->names().size();
      return ReportBadInput(input + ": --symbol " + options.symbol + ": never entered (" +
                            std::to_string(functions) + " functions in the call tree" +
                            (out.selection.empty() ? "" : " of the " + out.selection) + ")");
    }
    const std::string what = "below every entry into " + options.symbol + " (" +
                             std::to_string(below.positions) + " call path" +
                             (below.positions == 1 ? "" : "s") + ")";
    out.selection = out.selection.empty() ? what : out.selection + ", " + what;
    out.tree = std::move(below.tree);
  }
  return kExitOk;
}

bool WriteFile(const std::string& path, const std::string& text) {
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (!f) return false;
  const bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  return std::fclose(f) == 0 && ok;
}

TreeWeight WeightOf(const StacksCommandOptions& options) {
  TreeWeight weight = TreeWeight::kInsns;
  ParseTreeWeight(options.weight, weight);
  return weight;
}

std::string Title(const StackSource& source) {
  return "ptprof stacks " + source.input + (source.selection.empty() ? "" : ": " + source.selection);
}

int RunSingle(const StacksCommandOptions& options) {
  StackSource source;
  if (int status = LoadStacks(options, options.input, source); status != kExitOk) return status;
  const TreeWeight weight = WeightOf(options);
  if (weight == TreeWeight::kNs && source.time_unit != "ns")
    return ReportBadInput(options.input + ": --weight ns: the trace has no time in ns");

  if (options.format == "folded") {
    WriteFoldedStacks(source.tree, weight, stdout);
  } else if (options.format == "json") {
    nlohmann::json json = {{"input", source.input},
                           {"selection", source.selection},
                           {"total_insns", source.tree.root().total_insns},
                           {"total_ns", source.tree.root().total_ns},
                           {"blocks", source.blocks},
                           {"repairs", nlohmann::json::parse(RepairCountsJson(source.repairs))},
                           {"tree", nullptr}};
    // The tree as CallTreeJson gives it, written as it is made (src/report/call_tree_json_text.h).
    WriteJsonWithTree(json, "tree", source.tree.root(), stdout);
  } else {
    CallTreeTextOptions text;
    text.title = Title(source);
    text.weight = weight;
    text.min_share = options.min_share;
    text.max_depth = options.depth;
    WriteCallTreeText(source.tree, text, stdout);
    std::printf("stack repairs: %s\n", RepairCountsText(source.repairs).c_str());
  }

  if (!options.html.empty()) {
    SunburstHtmlOptions html;
    html.title = Title(source);
    html.subtitle = fmt::format("{} blocks decoded; stack repairs: {}", source.blocks,
                                RepairCountsText(source.repairs));
    html.weight = weight;
    auto names = source.kernel_names;
    html.module_of = [names](const CallTreeNode& node) { return names->ModuleOf(node); };
    if (!WriteFile(options.html, SunburstHtml(source.tree, html)))
      return ReportBadInput(options.html + ": cannot write the HTML");
  }
  return kExitOk;
}

int RunDiff(const StacksCommandOptions& options) {
  StackSource a, b;
  if (int status = LoadStacks(options, options.diff[0], a); status != kExitOk) return status;
  if (int status = LoadStacks(options, options.diff[1], b); status != kExitOk) return status;
  const TreeWeight weight = WeightOf(options);
  if (weight == TreeWeight::kNs && (a.time_unit != "ns" || b.time_unit != "ns"))
    return ReportBadInput((a.time_unit != "ns" ? a.input : b.input) +
                          ": --weight ns: the trace has no time in ns");

  stackdiff::StackDiffOptions diff_options;
  diff_options.weight = weight == TreeWeight::kNs ? stackdiff::Weight::kNs : stackdiff::Weight::kInsns;
  diff_options.changed_threshold = options.changed_threshold / 100.0;
  const stackdiff::StackDiff diff = stackdiff::DiffTrees(a.tree, b.tree, diff_options);
  if (diff.warning) std::fprintf(stderr, "ptprof: warning: stacks --diff: %s\n", diff.warning->c_str());
  const stackdiff::StackDiffNames names{a.input, b.input};
  if (options.format == "json")
    WriteStackDiffJson(diff, names, options.top, stdout);
  else
    std::fputs(stackdiff::StackDiffText(diff, names, options.top).c_str(), stdout);

  if (!options.html.empty()) {
    SunburstHtmlOptions html;
    html.title = "ptprof stacks --diff " + a.input + " " + b.input;
    html.subtitle = fmt::format("{}on call paths both have: {:.1f}% of A's {}, {:.1f}% of B's{}",
                                a.selection.empty() ? "" : a.selection + "; ", 100.0 * diff.shared_a,
                                weight == TreeWeight::kNs ? "time" : "instructions",
                                100.0 * diff.shared_b,
                                diff.warning ? " (warning: " + *diff.warning + ")" : "");
    html.weight = weight;
    html.changed_threshold = diff_options.changed_threshold;
    auto names_a = a.kernel_names, names_b = b.kernel_names;
    html.module_of = [names_a, names_b](const CallTreeNode& node) {
      std::string module = names_b->ModuleOf(node);
      return module.empty() ? names_a->ModuleOf(node) : module;
    };
    if (!WriteFile(options.html, SunburstDiffHtml(a.tree, a.input, b.tree, b.input, html)))
      return ReportBadInput(options.html + ": cannot write the HTML");
  }
  return kExitOk;
}

int RunStacksCommand(const StacksCommandOptions& options) {
  const bool diffing = !options.diff.empty();
  if (diffing && !options.input.empty())
    return UsageError("give either INPUT or --diff A B, not both");
  if (!diffing && options.input.empty()) return UsageError("INPUT (or --diff A B) is required");
  if (options.min_share < 0 || options.min_share > 100)
    return UsageError("--min-share must be a percentage from 0 to 100");
  if (options.depth < 0) return UsageError("--depth must be 0 (all) or more");
  if (!options.syscall.empty() && !SyscallNumber(SyscallArch::kX86_64, options.syscall) &&
      !SyscallNumber(SyscallArch::kAArch64, options.syscall)) {
    auto near = NearSyscallNames(SyscallArch::kX86_64, options.syscall, 3);
    return UsageError("--syscall " + options.syscall + ": no such Linux syscall" +
                      (near.empty() ? "" : fmt::format(" (did you mean {}?)", fmt::join(near, ", "))));
  }
  if (diffing && options.format == "folded")
    return UsageError("--format folded shows one tree; use it without --diff");
  return diffing ? RunDiff(options) : RunSingle(options);
}

}  // namespace

Command AddStacksCommand(CLI::App& parent) {
  auto options = std::make_shared<StacksCommandOptions>();
  CLI::App* app = parent.add_subcommand(
      "stacks", "Call trees of a decoded flow (text, folded stacks, JSON, an HTML sunburst); "
                "--diff A B compares two executions of the same code");
  app->add_option("input", options->input, "raw Intel PT trace, perf.data or .ptar");
  app->add_option("--diff", options->diff, "compare the trees of two inputs: A (baseline) and B")
      ->expected(2);
  AddImageOptions(*app, options->in);
  AddPtOptions(*app, options->in);
  AddAddrFilterOption(*app, options->in);
  AddStreamOption(*app, options->in);
  AddBinarySearchOptions(*app, options->in);
  app->add_option("--symbol", options->symbol,
                  "only the trees below every entry into function NAME, merged");
  app->add_option("--syscall", options->syscall,
                  "only the kernel trees of every instance of syscall NAME (e.g. getpid), merged; "
                  "with --symbol, the part of those below NAME");
  app->add_option("--interval", options->interval,
                  "only the flow from FROM to TO: trace offsets (0x1000..0x2000) or times with an "
                  "ns suffix (1500ns..2500ns, the unit ptprof delta reports)");
  app->add_option("--tid", options->tid, "only thread TID");
  app->add_option("--format", options->format,
                  "text (indented tree), folded (flame-graph input: a;b;c COUNT) or json")
      ->check(CLI::IsMember({"text", "folded", "json"}));
  app->add_option("--weight", options->weight,
                  "what shares and folded counts measure: insns (default) or ns")
      ->check(CLI::IsMember({"insns", "ns"}));
  app->add_option("--html", options->html, "also write the interactive sunburst to FILE.html");
  app->add_option("--min-share", options->min_share,
                  "text: summarise paths below this percentage of the whole (default 0)");
  app->add_option("--depth", options->depth, "text: show this many levels (default 0: all)");
  app->add_flag("--verbose", options->verbose,
                "say how each PT stream was decoded: in how many PSB segments, how many of them "
                "built into the call tree in parts on the decoding threads, or why sequentially");
  app->add_option("--top", options->top, "--diff: the N largest differences to list (default 20)");
  app->add_option("--changed-threshold", options->changed_threshold,
                  "--diff: a share change of at least this many percentage points is 'changed' "
                  "(default 1.0)");
  return {app, [options, app] {
            options->in.RecordImageOrder(*app);
            return RunStacksCommand(*options);
          }};
}

}  // namespace ptprof::cli
