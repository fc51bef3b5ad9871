// ptprof record: records a program's execution as Intel PT. The qemu backend runs it under QEMU
// user-mode emulation with ptprof's plugin and encodes every guest thread's flow as genuine PT
// (one stream per thread), written with the translated code, the sideband and the configuration
// into a .ptar that `ptprof decode`/`info` read. See docs/record.md.
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "src/archive/archive_writer.h"
#include "src/archive/translated_code.h"
#include "decoders/pt/pt_params.h"
#include "src/archive/manifest.h"
#include "src/archive/provenance.h"
#include "src/cli/cmd_record_system.h"
#include "src/cli/cmd_record_swbt.h"
#include "src/cli/cmd_record_hw.h"
#include "src/cli/record_options.h"
#include "src/cli/command.h"
#include "sideband/build_id.h"
#include "sideband/file_bytes.h"
#include "src/record/mapped_elfs.h"
#include "src/record/qemu_recorder.h"
#include "src/record/triggers/trigger_engine.h"

namespace ptprof::cli {

Result<record::triggers::SnapshotPolicy> ParseSnapshotPolicy(const RecordOptions& options) {
  namespace tr = record::triggers;
  tr::SnapshotPolicy policy;
  for (const std::string& text : options.snapshot_on) {
    auto spec = tr::ParseTrigger(text);
    if (!spec) return tl::unexpected(spec.error());
    policy.triggers.push_back(std::move(*spec));
  }
  if (!options.pre.empty()) {
    auto pre = tr::ParseSize(options.pre, "--pre");
    if (!pre) return tl::unexpected(pre.error());
    policy.pre_bytes = *pre;
  }
  if (!options.post.empty()) {
    auto post = tr::ParseDuration(options.post, "--post");
    if (!post) return tl::unexpected(post.error());
    policy.post_ns = *post;
  }
  if (!options.min_interval.empty()) {
    auto gap = tr::ParseDuration(options.min_interval, "--min-interval");
    if (!gap) return tl::unexpected(gap.error());
    policy.min_interval_ns = *gap;
  }
  policy.max_snapshots = options.max_snapshots;
  return policy;
}

Result<record::triggers::SnapshotPolicy> ParseNativeSnapshotPolicy(const RecordOptions& options) {
  auto policy = ParseSnapshotPolicy(options);
  if (!policy) return policy;
  for (const auto& spec : policy->triggers)
    if (spec.kind == record::triggers::TriggerKind::kInsns)
      return Fail("--snapshot-on '" + spec.text + "': --backend " + options.backend +
                  " does not count instructions (insns= needs --backend qemu or qemu-system)");
  return policy;
}

namespace {

// The qemu backend's snapshot mode: which triggers it can observe, and the ring size.
Status ApplySnapshotPolicy(const RecordOptions& options,
                           const record::triggers::SnapshotPolicy& policy,
                           record::QemuFlowOptions& flow) {
  namespace tr = record::triggers;
  if (policy.triggers.empty()) return {};
  const uint64_t ring = policy.pre_bytes ? policy.pre_bytes : options.buffer_size;
  // A snapshot decodes from its first PSB: a ring that cannot hold a whole PSB period (plus the
  // PSB+ that ends it) could hold no PSB at a trigger, and its snapshot would be undecodable.
  if (ring < 2 * options.psb_period)
    return Fail(fmt::format("--pre/--buffer-size {} is smaller than two PSB periods ({} bytes with "
                            "--psb-period {}): a snapshot could hold no PSB to decode from",
                            ring, 2 * options.psb_period, options.psb_period));
  flow.buffer_size = ring;
  return {};
}

std::string Join(const std::vector<std::string>& lines) {
  std::string text;
  for (const auto& line : lines) text += line + "\n";
  return text;
}

// Writes the archive; `binaries` adds the ELF files the program ran (for symbols).
Status WriteArchive(const RecordOptions& options, const record::QemuRecording& recording,
                    bool binaries) {
  auto writer = archive::ArchiveWriter::Create(options.output, options.force);
  if (!writer) return tl::unexpected(writer.error());
  archive::Manifest manifest =
      archive::NewManifest(std::string("ptprof ") + PTPROF_VERSION, "qemu", options.command);
  manifest.pt.nom_freq = 20;  // the encoder's CBR: core clock == TSC
  if (options.mtc_period) {
    manifest.pt.mtc_freq = static_cast<uint8_t>(*options.mtc_period);
    manifest.pt.cpuid_0x15_eax = 1;
    manifest.pt.cpuid_0x15_ebx = static_cast<uint32_t>(options.tsc_per_ctc);
  }
  manifest.pt_config["emulated"] = 1;
  manifest.pt_config["psb_period"] = options.psb_period;
  manifest.pt_config["tsc"] = options.no_tsc ? 0 : 1;
  manifest.pt_config["ret_compression"] = options.no_retcomp ? 0 : 1;
  manifest.pt_config["tnt64"] = options.tnt64 ? 1 : 0;
  manifest.pt_config["cycles_per_insn"] = options.cycles_per_insn;
  if (options.mtc_period) manifest.pt_config["mtc_period"] = *options.mtc_period;
  if (options.cyc_threshold) manifest.pt_config["cyc_threshold"] = *options.cyc_threshold;
  int32_t pid = kUnknownId;
  if (auto it = recording.info.find("pid"); it != recording.info.end())
    pid = static_cast<int32_t>(std::strtol(it->second.c_str(), nullptr, 10));

  for (const auto& thread : recording.threads) {
    for (size_t k = 0; k < thread.snapshots.size(); ++k) {
      const record::QemuSnapshot& snapshot = thread.snapshots[k];
      archive::StreamEntry stream;
      stream.name = fmt::format("tid{}.snap{}", thread.tid, k);
      stream.pid = pid;
      stream.tid = static_cast<int32_t>(thread.tid);
      stream.member = "streams/" + stream.name + ".pt";
      if (auto st = writer->Add(stream.member, snapshot.pt); !st) return st;
      manifest.streams.push_back(stream);
      archive::TriggerEntry trigger;
      trigger.kind = "snapshot";
      trigger.label = snapshot.label;
      trigger.stream = stream.name;
      trigger.offset = snapshot.pt.size();  // the trigger fired at the end of the snapshot
      trigger.tsc = snapshot.tsc;
      if (snapshot.host_ns != 0) trigger.time_ns = snapshot.host_ns;  // host CLOCK_MONOTONIC
      manifest.triggers.push_back(trigger);
    }
    if (!thread.snapshots.empty()) continue;
    archive::StreamEntry stream;
    stream.name = fmt::format("tid{}", thread.tid);
    stream.pid = pid;
    stream.tid = static_cast<int32_t>(thread.tid);
    stream.member = "streams/" + stream.name + ".pt";
    if (auto st = writer->Add(stream.member, thread.pt); !st) return st;
    manifest.streams.push_back(stream);
  }
  // The ELF files the program ran code from, where they were loaded: symbols for the decode.
  // They come first: the raw code below hides their bytes where it overlaps (it is what ran).
  const uint64_t first_ip = recording.threads.empty() ? 0 : recording.threads[0].first_ip;
  for (const record::MappedElf& elf : record::FindMappedElfs(recording.info, recording.sideband,
                                                              first_ip)) {
    if (!binaries) break;
    auto bytes = ReadFileBytes(elf.path);
    auto build_id = ReadBuildId(elf.path);
    if (!bytes || !build_id) continue;  // gone since the run: the raw code still decodes
    archive::ImageEntry image;
    image.kind = archive::ImageEntry::Kind::kElf;
    image.path = elf.path;
    image.build_id = build_id->value_or("");
    image.base = elf.base;
    image.size = bytes->size();
    image.pid = pid;
    const std::string name = elf.path.substr(elf.path.rfind('/') + 1);
    image.member = "images/" + (image.build_id.empty() ? "no-build-id" : image.build_id) + "/" + name;
    bool stored = false;
    for (const auto& other : manifest.images) stored = stored || other.member == image.member;
    if (!stored)
      if (auto st = writer->Add(image.member, *bytes); !st) return st;
    manifest.images.push_back(image);
  }
  // The executed code, exactly as QEMU translated it: one member, one raw image per region.
  if (auto st = archive::AddTranslatedCode(recording.code, pid, *writer, manifest); !st)
    return st;
  std::vector<std::string> info_lines;
  for (const auto& [key, value] : recording.info) info_lines.push_back(key + " " + value);
  std::vector<std::pair<std::string, std::string>> sideband = {
      {"qemu_info", Join(info_lines)}, {"qemu_mmaps", Join(recording.sideband)}};
  for (const auto& [kind, text] : sideband) {
    archive::SidebandEntry entry{kind, kind + ".txt", "sideband/" + kind + ".txt"};
    std::vector<uint8_t> bytes(text.begin(), text.end());
    if (auto st = writer->Add(entry.member, bytes); !st) return st;
    manifest.sideband.push_back(entry);
  }
  return writer->Finish(archive::ManifestToJson(manifest));
}

pt::EncoderOptions EncoderOptionsOf(const RecordOptions& options) {
  pt::EncoderOptions enc;
  enc.psb_period = options.psb_period;
  enc.emit_tsc = !options.no_tsc;
  enc.return_compression = !options.no_retcomp;
  enc.tnt64 = options.tnt64;
  enc.emit_timing = !options.no_tsc;
  enc.emit_mtc = options.mtc_period.has_value() && !options.no_tsc;
  if (options.mtc_period) enc.mtc_freq = static_cast<uint8_t>(*options.mtc_period);
  enc.emit_cyc = options.cyc_threshold.has_value();
  if (options.cyc_threshold) enc.cyc_threshold = static_cast<uint8_t>(*options.cyc_threshold);
  enc.tsc_per_ctc = static_cast<uint32_t>(options.tsc_per_ctc);
  return enc;
}

int RunRecordQemuSystem(const RecordOptions& options) {
  RecordSystemRequest request;
  request.output = options.output;
  request.force = options.force;
  request.encoder = EncoderOptionsOf(options);
  request.cycles_per_insn = static_cast<uint32_t>(options.cycles_per_insn);
  request.mtc_period = options.mtc_period;
  request.cyc_threshold = options.cyc_threshold;
  request.snapshot_on = options.snapshot_on;
  auto policy = ParseSnapshotPolicy(options);
  if (!policy) {
    std::fprintf(stderr, "ptprof: record: %s\n", policy.error().message.c_str());
    return kExitUsage;
  }
  request.policy = std::move(*policy);
  request.buffer_size = options.buffer_size;
  request.command = options.command;
  request.kernel = options.kernel;
  request.tracer = options.guest_tracer;
  request.smp = options.smp;
  request.timeout_seconds = options.timeout;
  if (options.qemu != "qemu-x86_64") request.qemu = options.qemu;
  request.plugin = options.plugin;
  request.keep_stream = options.keep_stream;
  request.quiet = options.quiet;
  return RunRecordSystem(request);
}

int RunRecordSwbtBackend(const RecordOptions& options) {
  RecordSwbtRequest request;
  request.output = options.output;
  request.force = options.force;
  request.lbr_depth = options.lbr_depth;
  request.sample_period = options.sample_period;
  request.command = options.command;
  request.binaries = !options.no_binaries;
  request.quiet = options.quiet;
  auto policy = ParseNativeSnapshotPolicy(options);
  if (!policy) {
    std::fprintf(stderr, "ptprof: record: %s\n", policy.error().message.c_str());
    return kExitUsage;
  }
  request.policy = std::move(*policy);
  request.ring_bytes = options.buffer_size;
  return RunRecordSwbt(request);
}

int RunRecord(const RecordOptions& options) {
  if (options.full && options.backend != "intel_pt" && options.backend != "cs_etm") {
    std::fprintf(stderr, "ptprof: record: --full is for --backend intel_pt and cs_etm (backend %s "
                         "records the whole run without it)\n", options.backend.c_str());
    return kExitUsage;
  }
  if (options.backend == "swbt") return RunRecordSwbtBackend(options);
  if (options.backend == "qemu-system") return RunRecordQemuSystem(options);
  if (options.backend == "intel_pt" || options.backend == "cs_etm") return RunRecordHardware(options);
  if (options.backend != "qemu")
    return ReportBadInput("record: backend '" + options.backend +
                          "' is not available yet (use --backend qemu or qemu-system)");
  if (options.command.empty()) return ReportBadInput("record: no command given (-- CMD ARGS)");
  if (!options.force && access(options.output.c_str(), F_OK) == 0)
    return ReportBadInput(options.output + ": exists (use --force to replace it)");
  record::QemuRecordOptions qemu;
  qemu.argv = options.command;
  qemu.qemu = options.qemu;
  qemu.plugin = options.plugin;
  qemu.stream_path = options.output + ".qemu-stream";
  qemu.punch_consumed = !options.keep_stream;
  qemu.flow.encoder = EncoderOptionsOf(options);
  qemu.flow.cycles_per_insn = static_cast<uint32_t>(options.cycles_per_insn);
  auto policy = ParseSnapshotPolicy(options);
  if (policy)
    if (auto st = ApplySnapshotPolicy(options, *policy, qemu.flow); !st)
      policy = tl::unexpected(st.error());
  if (!policy) {
    std::fprintf(stderr, "ptprof: record: %s\n", policy.error().message.c_str());
    return kExitUsage;
  }
  std::optional<record::triggers::TriggerEngine> engine;
  if (!policy->triggers.empty()) {
    engine.emplace(*policy);
    qemu.flow.triggers = &*engine;
  }

  // A file-size limit (ulimit -f) makes writes fail (EFBIG) instead of ending ptprof.
  std::signal(SIGXFSZ, SIG_IGN);
  auto recording = record::RecordWithQemu(qemu);
  if (!options.keep_stream) std::remove(qemu.stream_path.c_str());
  if (!recording) return ReportBadInput("record: " + recording.error().message);
  if (!recording->complete)
    std::fprintf(stderr, "ptprof: record: warning: %s; the trace holds what ran before\n",
                 recording->note.c_str());
  uint64_t lost_words = 0, overflows = 0;
  for (const auto& t : recording->threads) {
    lost_words += t.lost_words;
    overflows += t.overflows;
  }
  if (lost_words != 0)
    std::fprintf(stderr, "ptprof: record: warning: the emulator found no room for its stream and "
                         "lost %llu execution words; the trace has %llu OVF packets there\n",
                 static_cast<unsigned long long>(lost_words),
                 static_cast<unsigned long long>(overflows));
  if (recording->signal != 0)
    std::fprintf(stderr, "ptprof: record: the program was killed by signal %d; the trace holds "
                         "what ran before\n", recording->signal);
  if (auto st = WriteArchive(options, *recording, !options.no_binaries); !st) {
    // Most likely a full disk: the binaries are the bulk of an archive and the trace decodes
    // without them (the executed code is in it), so what was recorded is kept without them.
    if (auto again = WriteArchive(options, *recording, false); !again)
      return ReportBadInput("record: " + st.error().message);
    return ReportBadInput("record: " + st.error().message + "; wrote " + options.output +
                          " without the binaries (no symbols)");
  }
  if (!options.quiet) {
    uint64_t insns = 0, bytes = 0, reps = 0, signals = 0, crossings = 0, reruns = 0;
    for (const auto& t : recording->threads) {
      insns += t.insns;
      bytes += t.pt.size();
      reps += t.rep_repeats;
      signals += t.signals;
      crossings += t.page_crossings;
      reruns += t.page_reruns;
    }
    std::fprintf(stderr,
                 "ptprof: record: %zu thread(s), %llu instructions, %llu bytes of PT (%.3f bytes/"
                 "insn), %zu code regions, program exit status %d; wrote %s\n",
                 recording->threads.size(), static_cast<unsigned long long>(insns),
                 static_cast<unsigned long long>(bytes),
                 insns ? static_cast<double>(bytes) / static_cast<double>(insns) : 0.0,
                 recording->code.size(), recording->exit_status, options.output.c_str());
    std::fprintf(stderr,
                 "ptprof: record: emulation %.3f s, stream %llu bytes, encoding %.3f s CPU (%.1f M "
                 "insn/s); %llu rep-string iterations folded, %llu asynchronous transfers, "
                 "%llu page-crossing block ends, %llu of them run again in a block of their own\n",
                 recording->run_seconds, static_cast<unsigned long long>(recording->stream_bytes),
                 recording->encode_seconds,
                 recording->encode_seconds > 0
                     ? static_cast<double>(insns) / recording->encode_seconds / 1e6 : 0.0,
                 static_cast<unsigned long long>(reps), static_cast<unsigned long long>(signals),
                 static_cast<unsigned long long>(crossings),
                 static_cast<unsigned long long>(reruns));
    if (engine) {
      std::fprintf(stderr, "ptprof: record: %llu snapshot(s) triggered",
                   static_cast<unsigned long long>(engine->fired()));
      if (engine->suppressed())
        std::fprintf(stderr, ", %llu trigger(s) dropped by --min-interval/--max-snapshots",
                     static_cast<unsigned long long>(engine->suppressed()));
      std::fprintf(stderr, "\n");
    }
  }
  if (!recording->complete)
    return ReportBadInput("record: " + options.output + " holds the trace up to the failure: " +
                          recording->note);
  return kExitOk;
}

}  // namespace

Command AddRecordCommand(CLI::App& parent) {
  auto options = std::make_shared<RecordOptions>();
  CLI::App* app = parent.add_subcommand(
      "record", "record a program's execution as Intel PT (qemu: emulated, on any x86-64 machine)");
  app->add_option("--backend", options->backend, "recorder: swbt (native: software branch tracer), qemu, qemu-system, intel_pt or cs_etm")->capture_default_str();
  app->add_option("-o,--output", options->output, "the .ptar to write")->required();
  app->add_flag("--force", options->force, "replace an existing output");
  app->add_option("--psb-period", options->psb_period, "bytes of packets between PSB+")
      ->capture_default_str()->check(CLI::Range(uint64_t{1}, uint64_t{1} << 30));
  app->add_option("--mtc-period", options->mtc_period,
                  "MTC packets every 2^N crystal-clock ticks (off when not given)")
      ->check(CLI::Range(0, 15));
  app->add_option("--cyc-threshold", options->cyc_threshold,
                  "CYC packets when at least 2^(N-1) cycles passed (off when not given)")
      ->check(CLI::Range(0, 15));
  app->add_flag("--no-tsc", options->no_tsc, "no TSC, TMA, CBR or MTC packets");
  app->add_flag("--no-retcomp", options->no_retcomp, "no return compression: returns are TIPs");
  app->add_flag("--tnt64", options->tnt64, "long TNT packets (up to 47 outcomes)");
  app->add_option("--cycles-per-insn", options->cycles_per_insn,
                  "the cycle model: core cycles per instruction")
      ->capture_default_str()->check(CLI::Range(1, 1000));
  app->add_option("--qemu", options->qemu, "the QEMU emulator (qemu-system: qemu-system-x86_64)")->capture_default_str();
  app->add_option("--plugin", options->plugin, "ptprof's QEMU plugin (default: next to ptprof)");
  app->add_flag("--keep-stream", options->keep_stream, "keep the plugin's stream (OUT.qemu-stream)");
  app->add_flag("--no-binaries", options->no_binaries,
                "qemu: leave the ELF files out of the archive (smaller; decodes without symbols)");
  app->add_flag("-q,--quiet", options->quiet, "no summary line");
  app->add_option("--snapshot-on", options->snapshot_on,
                  "snapshot mode (repeatable): syscall=NAME[,NAME], "
                  "syscall-latency>DURATION[:NAME[,NAME]], addr=SYMBOL|0xADDR, signal=USR2, "
                  "every=DURATION, insns=N (docs/recording.md)")
      ->allow_extra_args(false);  // one trigger per --snapshot-on: `-- CMD -x` stays the command's
  app->add_option("--pre", options->pre,
                  "snapshot mode: trace kept before a trigger (SIZE: 64K, 1M; default --buffer-size)");
  app->add_option("--post", options->post,
                  "snapshot mode: keep tracing this long after a trigger (DURATION: 200us, 1ms)");
  app->add_option("--max-snapshots", options->max_snapshots,
                  "snapshot mode: stop cutting after N snapshots (0: no limit)");
  app->add_option("--min-interval", options->min_interval,
                  "snapshot mode: drop triggers closer than DURATION to the previous cut");
  app->add_option("--buffer-size", options->buffer_size,
                  "snapshot mode: the ring buffer per thread, in bytes")
      ->capture_default_str()->check(CLI::Range(uint64_t{64}, uint64_t{1} << 32));
  app->add_option("--kernel", options->kernel,
                  "qemu-system: the guest kernel (default: the lab's Debian cloud kernel)");
  app->add_option("--guest-tracer", options->guest_tracer,
                  "qemu-system: ftrace tracer set in the guest before the workload")
      ->capture_default_str()->check(CLI::IsMember({"nop", "function", "function_graph"}));
  app->add_option("--smp", options->smp, "qemu-system: virtual CPUs")
      ->capture_default_str()->check(CLI::Range(1, 64));
  app->add_option("--timeout", options->timeout,
                  "qemu-system: seconds before a guest that does not power off is stopped")
      ->capture_default_str()->check(CLI::Range(1, 86400));
  app->add_option("--lbr-depth", options->lbr_depth, "swbt: taken branches per burst")
      ->capture_default_str()->check(CLI::Range(1, 1024));
  app->add_option("--sample-period", options->sample_period,
                  "swbt: task-clock (CPU time) between bursts, e.g. 1ms, 500us, 2ms")
      ->capture_default_str();
  app->add_option("--filter", options->filters,
                  "intel_pt, cs_etm: address filter in perf's syntax (repeatable): "
                  "filter|start|stop ADDR[/SIZE][@FILE]")
      ->allow_extra_args(false);
  app->add_flag("--per-thread", options->per_thread,
                "intel_pt, cs_etm: one event for the command's thread instead of one per CPU");
  app->add_flag("--trace-kernel", options->trace_kernel,
                "intel_pt, cs_etm: trace the kernel as well");
  app->add_flag("--no-user", options->no_user,
                "intel_pt, cs_etm: do not trace user space (with --trace-kernel: the kernel only)");
  app->add_flag("--no-branch", options->no_branch,
                "intel_pt: no branch packets (BranchEn off): timing and PSB+ only");
  app->add_flag("--full", options->full,
                "intel_pt, cs_etm: record the whole run (the AUX area in the kernel's normal mode, "
                "drained as it fills) instead of snapshots; no --snapshot-on");
  app->add_option("--sink", options->sink,
                  "cs_etm: the CoreSight sink (a name under .../cs_etm/sinks, e.g. tmc_etr0); "
                  "default: an ETR, else the first sink");
  app->add_option("command", options->command, "the program and its arguments (after --)")
      ->required();
  app->prefix_command(false);
  return Command{app, [options] { return RunRecord(*options); }};
}

}  // namespace ptprof::cli
