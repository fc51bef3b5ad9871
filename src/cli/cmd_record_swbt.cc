// ptprof record --backend swbt (docs/swbt.md): the program runs natively with libptprof-swbt.so
// preloaded; the tracer writes its burst files, maps snapshots and counters into a scratch
// directory, which this turns into a .ptar (docs/formats/swbt.md, "In a .ptar").
#include "src/cli/cmd_record_swbt.h"

#include <dirent.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "decoders/lbr/swbt_bursts.h"
#include "sideband/build_id.h"
#include "sideband/file_bytes.h"
#include "src/archive/archive_writer.h"
#include "src/archive/manifest.h"
#include "src/archive/provenance.h"
#include "src/cli/command.h"
#include "src/record/swbt/proc_maps.h"
#include "src/record/swbt/snapshot_windows.h"
#include "src/record/triggers/breakpoint_probe.h"
#include "src/record/triggers/traced_launch.h"

namespace ptprof::cli {

namespace {

Result<std::string> FindTracerLibrary() {
  if (const char* env = std::getenv("PTPROF_SWBT_LIB"); env && *env) {
    if (access(env, R_OK) == 0) return std::filesystem::absolute(env).string();
    return Fail(std::string("PTPROF_SWBT_LIB=") + env + ": cannot read the tracer library");
  }
  std::error_code ec;
  auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  std::vector<std::string> candidates;
  if (!ec) {
    auto dir = exe.parent_path();
    candidates.push_back((dir / "src/record/swbt/libptprof-swbt.so").string());
    candidates.push_back((dir / "../src/record/swbt/libptprof-swbt.so").string());
    candidates.push_back((dir / "../lib/ptprof/libptprof-swbt.so").string());
  }
  for (const auto& c : candidates)
    if (access(c.c_str(), R_OK) == 0) return std::filesystem::canonical(c).string();
  return Fail("the tracer libptprof-swbt.so is not next to ptprof (looked in " +
              (candidates.empty() ? std::string("?") : candidates[0]) + "); set PTPROF_SWBT_LIB");
}

struct ProgramRun {
  int exit_status = -1;  // when it exited
  int signal = 0;        // when a signal ended it
  // Snapshot mode: what the triggers decided, and the trigger events the kernel dropped.
  std::vector<record::triggers::SnapshotDecision> decisions;
  uint64_t fired = 0, suppressed = 0, lost = 0;
};

// Runs the command with the tracer preloaded; returns how it ended. The program starts stopped
// after execve so that, in snapshot mode, the trigger events are opened on it (and addr= symbols
// resolved against its executable) before its first instruction.
Result<ProgramRun> RunTraced(const RecordSwbtRequest& request, const std::string& library,
                             const std::string& dir, uint64_t period_ns) {
  namespace tr = record::triggers;
  std::string preload = library;
  if (const char* old = std::getenv("LD_PRELOAD"); old && *old) preload += std::string(":") + old;
  tr::LaunchSpec spec{request.command,
                      {{"LD_PRELOAD", preload},
                       {"PTPROF_SWBT_DIR", dir},
                       {"PTPROF_SWBT_DEPTH", std::to_string(request.lbr_depth)},
                       {"PTPROF_SWBT_PERIOD_NS", std::to_string(period_ns)}}};
  auto child = tr::LaunchStoppedAtExec(spec);
  if (!child) return tl::unexpected(child.error());
  tr::TriggerEngine engine(request.policy);
  std::unique_ptr<tr::LiveTriggers> live;
  auto abandon = [&](const Error& error) -> Result<ProgramRun> {
    kill(*child, SIGKILL);
    tr::ResumeLaunched(*child);
    int status = 0;
    waitpid(*child, &status, 0);
    return tl::unexpected(error);
  };
  if (!request.policy.triggers.empty()) {
    if (auto st = tr::ResolveAddressTriggers(*child, engine); !st) return abandon(st.error());
    auto opened = tr::LiveTriggers::Open(*child, engine, false);
    if (!opened) return abandon(opened.error());
    live = std::move(*opened);
    if (auto st = live->Enable(); !st) return abandon(st.error());
  }
  if (auto st = tr::ResumeLaunched(*child); !st) return abandon(st.error());
  tr::WatchResult watched = tr::WatchUntilExit(*child, live.get(), 20);
  ProgramRun run;
  run.exit_status = watched.exit_status;
  run.signal = watched.signal;
  run.decisions = std::move(watched.decisions);
  run.fired = engine.fired();
  run.suppressed = engine.suppressed();
  run.lost = watched.lost;
  return run;
}

std::vector<std::string> FilesWith(const std::string& dir, const std::string& prefix,
                                   const std::string& suffix) {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (name.size() > prefix.size() + suffix.size() && name.rfind(prefix, 0) == 0 &&
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0)
      names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

// "bursts.pid12.1.swbt" -> "pid12.1"
std::string Stem(const std::string& name, const std::string& prefix, const std::string& suffix) {
  return name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
}

int32_t PidOfStem(const std::string& stem) {
  return static_cast<int32_t>(std::strtol(stem.c_str() + 3, nullptr, 10));
}

struct Summary {
  uint64_t bursts = 0, complete = 0, branches = 0, files = 0, snapshots = 0;
  nlohmann::ordered_json counters = nlohmann::ordered_json::object();
};

// Sums the per-process counters into "total" and keeps each process's own.
nlohmann::ordered_json CombineCounters(const std::string& dir) {
  nlohmann::ordered_json processes = nlohmann::ordered_json::array();
  nlohmann::ordered_json total = nlohmann::ordered_json::object();
  for (const std::string& name : FilesWith(dir, "counters.", ".json")) {
    auto bytes = ReadFileBytes(dir + "/" + name);
    if (!bytes) continue;
    auto json = nlohmann::ordered_json::parse(bytes->begin(), bytes->end(), nullptr, false);
    if (json.is_discarded() || !json.is_object()) continue;
    for (const auto& [key, value] : json.items()) {
      if (key == "pid" || key == "depth" || key == "period_ns" || key == "tsc_per_ns" ||
          key == "first_error")
        continue;
      if (value.is_number_unsigned()) {
        total[key] = total.value(key, uint64_t{0}) + value.get<uint64_t>();
      } else if (value.is_object()) {
        if (!total.contains(key)) total[key] = nlohmann::ordered_json::object();
        for (const auto& [reason, n] : value.items())
          if (n.is_number_unsigned())
            total[key][reason] = total[key].value(reason, uint64_t{0}) + n.get<uint64_t>();
      }
    }
    // Handler time in nanoseconds, from the process's own TSC rate.
    const double tsc_per_ns = json.value("tsc_per_ns", 0.0);
    for (const char* ticks : {"ticks_sample_handler", "ticks_breakpoint_handler", "ticks_decode",
                              "ticks_breakpoint_arm", "ticks_sampler_arm"}) {
      const std::string ns = std::string("ns") + (ticks + 5);
      const uint64_t value = tsc_per_ns > 0 ? static_cast<uint64_t>(std::llround(
                                                  json.value(ticks, uint64_t{0}) / tsc_per_ns))
                                            : 0;
      json[ns] = value;
      total[ns] = total.value(ns, uint64_t{0}) + value;
    }
    processes.push_back(json);
  }
  nlohmann::ordered_json out;
  out["total"] = total;
  out["processes"] = processes;
  return out;
}

// Snapshot mode: the bursts of one process's file that a ring of --pre bytes would hold at each
// decision's cut, one member per decision with any (bursts/pid<P>.snap<K>.swbt, K the decision's
// sequence number), each with a "snapshot" trigger entry naming it.
Status AddSnapshots(const RecordSwbtRequest& request, const ProgramRun& run, const std::string& stem,
                    const std::vector<uint8_t>& bytes, archive::ArchiveWriter& writer,
                    archive::Manifest& manifest, Summary& summary) {
  auto records = record::swbt::IndexBurstRecords(bytes, "bursts." + stem + ".swbt");
  if (!records) return tl::unexpected(records.error());
  const uint64_t ring = request.policy.pre_bytes ? request.policy.pre_bytes : request.ring_bytes;
  for (const auto& d : run.decisions) {
    const std::vector<size_t> chosen = record::swbt::RingAtCut(*records, d.cut_ns, ring);
    if (chosen.empty()) continue;
    const std::string name = fmt::format("{}.snap{}", stem, d.sequence);
    archive::SidebandEntry entry{kSwbtBurstsKind, name, "bursts/" + name + ".swbt"};
    if (auto st = writer.Add(entry.member, record::swbt::SnapshotFile(bytes, *records, chosen)); !st)
      return st;
    manifest.sideband.push_back(entry);
    archive::TriggerEntry snapshot;
    snapshot.kind = "snapshot";
    snapshot.label = d.label;
    snapshot.stream = name;
    snapshot.time_ns = d.time_ns;
    if (d.tid != 0) snapshot.tid = d.tid;  // clock ticks belong to no thread
    if (d.latency_ns != 0) snapshot.latency_ns = d.latency_ns;
    manifest.triggers.push_back(snapshot);
    ++summary.snapshots;
  }
  return {};
}

Status WriteSwbtArchive(const RecordSwbtRequest& request, const std::string& dir,
                        uint64_t period_ns, const ProgramRun& run, Summary& summary) {
  auto writer = archive::ArchiveWriter::Create(request.output, request.force);
  if (!writer) return tl::unexpected(writer.error());
  archive::Manifest manifest = archive::NewManifest(std::string("ptprof ") + PTPROF_VERSION,
                                                     kSwbtSourceKind, request.command);
  manifest.pt_config["swbt_lbr_depth"] = request.lbr_depth;
  manifest.pt_config["swbt_sample_period_ns"] = period_ns;
  if (!request.policy.triggers.empty()) {
    manifest.pt_config["swbt_snapshot_ring_bytes"] =
        request.policy.pre_bytes ? request.policy.pre_bytes : request.ring_bytes;
    manifest.pt_config["swbt_snapshot_post_ns"] = request.policy.post_ns;
  }
  if (run.signal == 0) manifest.pt_config["program_exit_status"] = static_cast<uint64_t>(run.exit_status);
  else manifest.pt_config["program_signal"] = static_cast<uint64_t>(run.signal);

  for (const std::string& name : FilesWith(dir, "bursts.", ".swbt")) {
    const std::string stem = Stem(name, "bursts.", ".swbt");
    auto bytes = ReadFileBytes(dir + "/" + name);
    if (!bytes) return tl::unexpected(bytes.error());
    auto header = ForEachSwbtBurst(*bytes, name, [&](const SwbtBurst& burst) {
      ++summary.bursts;
      summary.complete += burst.reason == SwbtEndReason::kComplete;
      summary.branches += burst.sample.branches.size();
    });
    if (!header) return tl::unexpected(header.error());
    ++summary.files;
    if (!request.policy.triggers.empty()) {
      if (auto st = AddSnapshots(request, run, stem, *bytes, *writer, manifest, summary); !st)
        return st;
      continue;
    }
    archive::SidebandEntry entry{kSwbtBurstsKind, stem, "bursts/" + stem + ".swbt"};
    if (auto st = writer->Add(entry.member, *bytes); !st) return st;
    manifest.sideband.push_back(entry);
  }
  if (!request.policy.triggers.empty())
    for (const auto& d : run.decisions) {
      // A decision whose ring held no burst (the program had not been sampled yet) is still
      // recorded: which trigger fired, when and for which thread.
      const std::string suffix = fmt::format(".snap{}", d.sequence);
      bool cut = false;
      for (const auto& t : manifest.triggers)
        cut = cut || (t.kind == "snapshot" && t.stream.size() > suffix.size() &&
                      t.stream.compare(t.stream.size() - suffix.size(), suffix.size(), suffix) == 0);
      if (cut) continue;
      archive::TriggerEntry trigger;
      trigger.kind = "trigger";
      trigger.label = d.label;
      trigger.time_ns = d.time_ns;
      if (d.tid != 0) trigger.tid = d.tid;
      if (d.latency_ns != 0) trigger.latency_ns = d.latency_ns;
      manifest.triggers.push_back(trigger);
    }
  std::map<std::string, archive::ImageEntry> images;  // by path and base
  std::vector<std::string> image_order;
  for (const std::string& name : FilesWith(dir, "maps.", ".txt")) {
    const std::string stem = Stem(name, "maps.", ".txt");  // pid12.start
    auto bytes = ReadFileBytes(dir + "/" + name);
    if (!bytes) continue;
    archive::SidebandEntry entry{kSwbtMapsKind, stem, "sideband/maps." + stem + ".txt"};
    if (auto st = writer->Add(entry.member, *bytes); !st) return st;
    manifest.sideband.push_back(entry);
    if (!request.binaries) continue;
    const std::string text(bytes->begin(), bytes->end());
    for (const swbt::MappedFile& file : swbt::ExecutableFiles(swbt::ParseProcMaps(text))) {
      const std::string key = fmt::format("{}@{:x}@{}", file.path, file.base, PidOfStem(stem));
      if (images.count(key)) continue;
      auto elf = ReadFileBytes(file.path);
      auto build_id = ReadBuildId(file.path);
      if (!elf || !build_id || elf->size() < 18) continue;
      archive::ImageEntry image;
      image.kind = archive::ImageEntry::Kind::kElf;
      image.path = file.path;
      image.build_id = build_id->value_or("");
      const bool fixed = (*elf)[16] == 2;  // ET_EXEC: loaded at its link-time addresses
      image.base = fixed ? 0 : file.base;
      image.size = elf->size();
      image.pid = PidOfStem(stem);
      const std::string base_name = file.path.substr(file.path.rfind('/') + 1);
      image.member = "images/" + (image.build_id.empty() ? "no-build-id" : image.build_id) + "/" +
                     base_name;
      if (!writer->Has(image.member))
        if (auto st = writer->Add(image.member, *elf); !st) return st;
      images[key] = image;
      image_order.push_back(key);
    }
  }
  for (const auto& key : image_order) manifest.images.push_back(images[key]);
  summary.counters = CombineCounters(dir);
  const std::string counters = summary.counters.dump(1) + "\n";
  archive::SidebandEntry entry{kSwbtCountersKind, "swbt_counters", "sideband/swbt_counters.json"};
  if (auto st = writer->Add(entry.member, std::vector<uint8_t>(counters.begin(), counters.end())); !st)
    return st;
  manifest.sideband.push_back(entry);
  return writer->Finish(archive::ManifestToJson(manifest));
}

}  // namespace

Result<uint64_t> ParseDurationNs(const std::string& text) {
  size_t unit_at = 0;
  while (unit_at < text.size() && (std::isdigit(static_cast<unsigned char>(text[unit_at])) ||
                                   text[unit_at] == '.'))
    ++unit_at;
  const std::string number = text.substr(0, unit_at), unit = text.substr(unit_at);
  char* end = nullptr;
  const double value = number.empty() ? -1 : std::strtod(number.c_str(), &end);
  double scale = 0;
  if (unit == "ns") scale = 1;
  else if (unit == "us") scale = 1e3;
  else if (unit == "ms" || unit.empty()) scale = 1e6;
  else if (unit == "s") scale = 1e9;
  if (value <= 0 || scale == 0 || (end && *end != '\0'))
    return Fail("'" + text + "': expected a duration such as 1ms, 500us, 0.5ms or 2s");
  return static_cast<uint64_t>(std::llround(value * scale));
}

int RunRecordSwbt(const RecordSwbtRequest& request) {
  if (request.command.empty()) return ReportBadInput("record: no command given (-- CMD ARGS)");
  auto period = ParseDurationNs(request.sample_period);
  if (!period) {
    std::fprintf(stderr, "ptprof: record: --sample-period %s\n", period.error().message.c_str());
    return kExitUsage;
  }
  if (*period < 50000) {
    std::fprintf(stderr, "ptprof: record: --sample-period %s: at least 50us (shorter periods "
                         "livelock the program with signals)\n", request.sample_period.c_str());
    return kExitUsage;
  }
  if (request.lbr_depth == 0 || request.lbr_depth > kSwbtMaxDepth) {
    std::fprintf(stderr, "ptprof: record: --lbr-depth %u: expected 1..%u\n", request.lbr_depth,
                 kSwbtMaxDepth);
    return kExitUsage;
  }
  if (!request.force && access(request.output.c_str(), F_OK) == 0)
    return ReportBadInput(request.output + ": exists (use --force to replace it)");
  auto library = FindTracerLibrary();
  if (!library) return ReportBadInput("record: " + library.error().message);
  char scratch[] = "/tmp/ptprof-swbt.XXXXXX";
  if (mkdtemp(scratch) == nullptr) return ReportBadInput("record: cannot create a scratch directory");
  const std::string dir = scratch;
  std::signal(SIGXFSZ, SIG_IGN);
  auto run = RunTraced(request, *library, dir, *period);
  Summary summary;
  Status written = run ? WriteSwbtArchive(request, dir, *period, *run, summary) : Status{};
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  if (!run) return ReportBadInput("record: " + run.error().message);
  if (!written) return ReportBadInput("record: " + written.error().message);
  const nlohmann::ordered_json total = summary.counters.value("total", nlohmann::ordered_json::object());
  // Some virtual machines accept breakpoints and never report a hit: the bursts then end where
  // their first one should have fired, and the user should know it is the machine.
  if (std::string why; summary.bursts > 0 && total.value("breakpoint_hits", uint64_t{0}) == 0 &&
                       !record::triggers::ExecuteBreakpointsFire(&why))
    std::fprintf(stderr, "ptprof: warning: record: no breakpoint was hit: %s\n", why.c_str());
  if (!request.quiet) {
    std::string ended;
    if (total.contains("ended"))
      for (const auto& [reason, n] : total["ended"].items())
        if (reason != "complete" && n.get<uint64_t>() != 0)
          ended += fmt::format("{}{} {}", ended.empty() ? "" : ", ", n.get<uint64_t>(), reason);
    std::fprintf(stderr,
                 "ptprof: record: %llu process image(s), %llu thread(s), %llu samples, %llu "
                 "bursts (%llu complete%s%s), %llu branches, %llu breakpoints hit; program %s %d; "
                 "wrote %s\n",
                 static_cast<unsigned long long>(summary.files),
                 static_cast<unsigned long long>(total.value("threads_traced", uint64_t{0})),
                 static_cast<unsigned long long>(total.value("samples", uint64_t{0})),
                 static_cast<unsigned long long>(summary.bursts),
                 static_cast<unsigned long long>(summary.complete), ended.empty() ? "" : "; ended early: ",
                 ended.c_str(), static_cast<unsigned long long>(summary.branches),
                 static_cast<unsigned long long>(total.value("breakpoint_hits", uint64_t{0})),
                 run->signal ? "killed by signal" : "exit status",
                 run->signal ? run->signal : run->exit_status, request.output.c_str());
    if (!request.policy.triggers.empty()) {
      std::fprintf(stderr, "ptprof: record: %llu trigger(s) fired, %llu snapshot member(s) written",
                   static_cast<unsigned long long>(run->fired),
                   static_cast<unsigned long long>(summary.snapshots));
      if (run->suppressed)
        std::fprintf(stderr, ", %llu trigger(s) dropped by --min-interval/--max-snapshots",
                     static_cast<unsigned long long>(run->suppressed));
      if (run->lost)
        std::fprintf(stderr, ", %llu trigger event(s) lost by the kernel",
                     static_cast<unsigned long long>(run->lost));
      std::fprintf(stderr, "\n");
    }
    if (total.value("threads_failed", uint64_t{0}) != 0)
      std::fprintf(stderr, "ptprof: record: warning: %llu thread(s) could not be traced "
                           "(perf_event_open failed; see /proc/sys/kernel/perf_event_paranoid)\n",
                   static_cast<unsigned long long>(total.value("threads_failed", uint64_t{0})));
  }
  return kExitOk;
}

}  // namespace ptprof::cli
