// ptprof record --backend intel_pt|cs_etm: the CPU's trace hardware through perf_event_open
// (src/record/intel_pt/hw_recorder.h). The snapshots become AUX buffers of a perf.data (what
// `perf record -e intel_pt// --snapshot` or `-e cs_etm// --snapshot` would have written:
// sideband, attr, AUXTRACE_INFO with intel_pt's timing parameters or each CPU's trace unit
// registers), written as OUT when OUT ends in .data, else packed with the binaries into a .ptar
// whose manifest lists each snapshot's trigger, thread and time.
#include "src/cli/cmd_record_hw.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "sideband/perf/perf_data_writer.h"
#include "sideband/perf/perf_record.h"
#include "sideband/perf/perf_data.h"
#include "src/archive/provenance.h"
#include "src/cli/command.h"
#include "src/cli/etm_archive.h"
#include "src/cli/fake_aux_replay.h"
#include "src/pipeline/session.h"
#include "src/pipeline/session_archive.h"
#include "src/record/cs_etm/etm_attr.h"
#include "src/record/cs_etm/etm_metadata.h"
#include "src/record/intel_pt/fake_aux_kernel.h"
#include "src/record/intel_pt/hw_recorder.h"
#include "src/record/intel_pt/hw_refusal.h"
#include "src/record/intel_pt/pt_attr.h"
#include "src/record/intel_pt/sideband_facts.h"
#include "src/record/swbt/proc_maps.h"

namespace ptprof::cli {

namespace {

namespace hw = record::hw;

bool EndsWith(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// --psb-period is in bytes for every backend; intel_pt takes 2^(N+11).
Result<uint64_t> PsbExponent(uint64_t bytes) {
  for (uint64_t n = 0; n < 16; ++n)
    if ((uint64_t{2048} << n) == bytes) return n;
  return Fail(fmt::format("--psb-period {}: intel_pt takes a power of two from 2048 bytes", bytes));
}

// The executable file mappings of every /proc/PID/maps text the recorder read, once each.
std::vector<perf::PerfMapping> Mappings(const std::vector<std::string>& maps) {
  std::vector<perf::PerfMapping> out;
  std::map<std::string, bool> seen;
  for (const std::string& text : maps)
    for (const auto& line : swbt::ParseProcMaps(text)) {
      if (line.perms.find('x') == std::string::npos || line.path.empty() || line.path[0] != '/')
        continue;
      const std::string key = fmt::format("{:x}-{:x}@{}", line.start, line.end, line.path);
      if (seen[key]) continue;
      seen[key] = true;
      out.push_back(perf::PerfMapping{line.start, line.end - line.start, line.offset, line.path});
    }
  return out;
}

// The backend's event and what its perf.data needs besides the trace.
struct Backend {
  hw::HwAttr attr;
  uint64_t align = 1;                 // snapshot starts: cs_etm's 16-byte formatter frames
  std::optional<hw::PmuSysfs> etm;    // cs_etm: the PMU whose cpuN/ registers describe the units
};

Result<Backend> IntelPtBackend(const RecordOptions& options) {
  auto pmu = hw::ReadPmuSysfs(hw::SysfsRoot(), "intel_pt");
  if (!pmu) return tl::unexpected(pmu.error());
  hw::IntelPtOptions pt;
  if (options.psb_period != 4096) {  // not the qemu default: the user asked for a period
    auto n = PsbExponent(options.psb_period);
    if (!n) return tl::unexpected(n.error());
    pt.psb_period = *n;
  }
  pt.mtc_period = options.mtc_period;
  pt.cyc_threshold = options.cyc_threshold;
  pt.no_tsc = options.no_tsc;
  pt.no_retcomp = options.no_retcomp;
  pt.kernel = options.trace_kernel;
  pt.user = !options.no_user;
  pt.branch = !options.no_branch;
  pt.filters = options.filters;
  pt.per_cpu = !options.per_thread;
  auto attr = hw::BuildIntelPtAttr(*pmu, pt);
  if (!attr) return tl::unexpected(attr.error());
  return Backend{*attr, 1, std::nullopt};
}

// cs_etm: timestamps unless --no-tsc, context IDs, cycle-accurate with --cyc-threshold.
Result<Backend> CsEtmBackend(const RecordOptions& options) {
  if (options.mtc_period) return Fail("--mtc-period is an intel_pt option; cs_etm has no MTC");
  if (options.no_retcomp)
    return Fail("--no-retcomp is an intel_pt option; cs_etm compresses no returns by default");
  if (options.no_branch)
    return Fail("--no-branch is an intel_pt option; cs_etm always traces the program flow");
  auto pmu = hw::ReadPmuSysfs(hw::SysfsRoot(), "cs_etm");
  if (!pmu) return tl::unexpected(pmu.error());
  hw::EtmOptions etm;
  etm.sink = options.sink;
  etm.timestamp = !options.no_tsc;
  etm.cycacc = options.cyc_threshold.has_value();
  etm.cc_threshold = options.cyc_threshold;
  etm.kernel = options.trace_kernel;
  etm.user = !options.no_user;
  etm.per_cpu = !options.per_thread;
  auto attr = hw::BuildEtmAttr(*pmu, etm);
  if (!attr) return tl::unexpected(attr.error());
  Backend backend{attr->attr, 16, *pmu};
  // Without timestamp packets perf decodes a cs_etm trace without time, and leaves sample times
  // out of the recording as perf record does (its decoder would otherwise wait for a timestamp).
  if (!etm.timestamp) backend.attr.attr.sample_type &= ~uint64_t{PERF_SAMPLE_TIME};
  if (!options.filters.empty()) {
    std::vector<hw::AddressFilter> filters;
    for (const std::string& text : options.filters) {
      auto parsed = hw::ParseAddressFilters(text);
      if (!parsed) return tl::unexpected(parsed.error());
      filters.insert(filters.end(), parsed->begin(), parsed->end());
    }
    backend.attr.filter = hw::FormatAddressFilters(filters);
  }
  // Every CPU's registers must be readable before the command runs, not after.
  if (auto info = hw::BuildCsEtmInfo(*pmu, backend.attr.attr.config, true, {}); !info)
    return tl::unexpected(info.error());
  return backend;
}

std::string Machine() {
  utsname u{};
  return uname(&u) == 0 ? u.machine : "";
}

// arm64's cpuid as perf writes it: MIDR_EL1 of CPU 0, 0x-prefixed, 16 hex digits.
std::string ArmCpuId() {
  std::ifstream in("/sys/devices/system/cpu/cpu0/regs/identification/midr_el1");
  std::string text;
  in >> text;
  return text;
}

Status DescribeIntelPt(const RecordOptions& options, const Backend& backend,
                       const record::hw::HwRecording& rec, perf::PerfDataDescription& d) {
  perf::IntelPtInfo& info = d.pt_info;
  info.pmu_type = backend.attr.attr.type;
  if (rec.have_clock) {
    info.time_shift = rec.clock.time_shift;
    info.time_mult = rec.clock.time_mult;
    info.time_zero = rec.clock.time_zero;
    info.cap_user_time_zero = true;
  }
  using Bits = perf::IntelPtConfigBits;
  info.tsc_bit = uint64_t{1} << Bits::kTsc;
  info.noretcomp_bit = uint64_t{1} << Bits::kNoRetComp;
  info.mtc_bit = uint64_t{1} << Bits::kMtc;
  info.mtc_freq_bits = uint64_t{0xf} << Bits::kMtcPeriod;
  info.cyc_bit = uint64_t{1} << Bits::kCyc;
  info.snapshot_mode = !options.full;
  info.per_cpu_mmaps = !options.per_thread;
  info.filter = backend.attr.filter;
  d.cpuid = fmt::format("{},{},{},{}", rec.cpu.vendor, rec.cpu.family, rec.cpu.model,
                        rec.cpu.stepping);
  uint32_t idx = 0;
  for (const auto& s : rec.snapshots)
    d.buffers.push_back(perf::PerfAuxBuffer{idx++, rec.pid, s.cpu < 0 ? 0 : s.cpu, s.bytes});
  return {};
}

Status DescribeCsEtm(const Backend& backend, const record::hw::HwRecording& rec,
                     const hw::SidebandFacts& sideband, perf::PerfDataDescription& d) {
  auto info = hw::BuildCsEtmInfo(*backend.etm, backend.attr.attr.config, !rec.full,
                                 sideband.trace_ids);
  if (!info) return tl::unexpected(info.error());
  d.auxtrace_type = perf::kAuxtraceCsEtm;
  d.etm_info = std::move(*info);
  d.config2 = backend.attr.attr.config2;
  d.nr_cpus = d.etm_info.nr_cpus;
  d.cpuid = ArmCpuId();
  uint32_t idx = 0;
  for (const auto& s : rec.snapshots)  // per-thread buffers keep cpu -1, as perf writes them
    d.buffers.push_back(perf::PerfAuxBuffer{idx++, rec.pid, s.cpu, s.bytes});
  return {};
}

Result<perf::PerfDataDescription> Describe(const RecordOptions& options, const Backend& backend,
                                           const record::hw::HwRecording& rec,
                                           const hw::SidebandFacts& sideband) {
  perf::PerfDataDescription d;
  d.config = backend.attr.attr.config;
  perf::PerfThread thread;
  thread.pid = thread.tid = rec.pid;
  thread.comm = std::filesystem::path(options.command[0]).filename().string();
  thread.mappings = Mappings(rec.maps);
  for (const auto& m : sideband.mappings) {
    bool known = false;
    for (const auto& have : thread.mappings)
      known = known || (have.address == m.address && have.length == m.length &&
                        have.filename == m.filename);
    if (!known) thread.mappings.push_back(m);
  }
  d.threads.push_back(thread);
  d.sample_time = (backend.attr.attr.sample_type & PERF_SAMPLE_TIME) != 0;
  d.kernel_records = sideband.carried;
  const Status described = backend.etm ? DescribeCsEtm(backend, rec, sideband, d)
                                       : DescribeIntelPt(options, backend, rec, d);
  if (!described) return tl::unexpected(described.error());
  d.start_time = rec.snapshots.empty() ? 0 : rec.snapshots.front().time_ns;
  if (sideband.first_time) d.start_time = std::min(d.start_time, *sideband.first_time);
  d.end_time = rec.snapshots.empty() ? 1 : rec.snapshots.back().time_ns + 1;
  d.arch = Machine();
  d.cmdline = options.command;
  d.hostname = archive::HostName();
  return d;
}

// The snapshots' trigger entries, one per snapshot, naming the streams `stream_names`.
std::vector<archive::TriggerEntry> TriggerEntries(const hw::HwRecording& rec,
                                                  const std::vector<std::string>& stream_names) {
  std::vector<archive::TriggerEntry> out;
  for (size_t i = 0; i < rec.snapshots.size() && i < stream_names.size(); ++i) {
    const hw::HwSnapshot& s = rec.snapshots[i];
    archive::TriggerEntry t;
    t.kind = "snapshot";
    t.label = s.label;
    t.stream = stream_names[i];
    t.offset = s.bytes.size();  // the trigger fired at the end of the snapshot
    t.time_ns = s.time_ns;
    if (s.tid != 0) t.tid = s.tid;
    if (s.latency_ns != 0) t.latency_ns = s.latency_ns;
    out.push_back(t);
  }
  return out;
}

// Packs the perf.data written at `data_path` into the .ptar options.output: intel_pt through a
// session (streams, images), cs_etm as the perf.data whole with its binaries (etm_archive.h);
// both with the snapshots' triggers.
Status ArchiveRecording(const RecordOptions& options, const hw::HwRecording& rec,
                        const hw::SidebandFacts& sideband, bool faked, const std::string& data_path) {
  const std::map<std::string, uint64_t> parameters = {
      {"aux_records_truncated", sideband.truncated}, {"aux_records_collision", sideband.collision}};
  if (options.backend == "cs_etm") {
    auto data = perf::ReadPerfData(data_path);
    if (!data) return tl::unexpected(data.error());
    std::vector<std::string> names;
    for (const auto& stream : data->aux_streams) names.push_back(stream.name);
    EtmArchiveOptions etm;
    etm.output = options.output;
    etm.force = options.force;
    etm.tool = std::string("ptprof ") + PTPROF_VERSION;
    etm.triggers = TriggerEntries(rec, names);
    etm.parameters = parameters;
    etm.source_paths = options.command;
    if (faked) etm.parameters["fake_aux_replay"] = 1;
    auto summary = WritePerfEtmArchive(data_path, etm);
    if (!summary) return tl::unexpected(summary.error());
    return {};
  }
  auto session = OpenSession(data_path, RawInputOptions{}, false);
  if (!session) return tl::unexpected(session.error());
  if (session->manifest.streams.size() != rec.snapshots.size())
    return Fail(fmt::format("the perf.data written holds {} streams for {} snapshots",
                            session->manifest.streams.size(), rec.snapshots.size()));
  std::vector<std::string> names;
  for (const auto& stream : session->manifest.streams) names.push_back(stream.name);
  session->manifest.triggers = TriggerEntries(rec, names);
  session->manifest.source.kind = options.backend + (faked ? " (fake AUX replay)" : "");
  session->manifest.source.paths = options.command;
  for (const auto& [name, value] : parameters) session->manifest.pt_config[name] = value;
  if (faked) session->manifest.pt_config["fake_aux_replay"] = 1;
  ArchiveWriteOptions write;
  write.force = options.force;
  write.tool = std::string("ptprof ") + PTPROF_VERSION;
  return WriteSessionArchive(*session, options.output, write);
}

}  // namespace

int RunRecordHardware(const RecordOptions& options) {
  if (options.command.empty()) return ReportBadInput("record: no command given (-- CMD ARGS)");
  if (!options.force && access(options.output.c_str(), F_OK) == 0)
    return ReportBadInput(options.output + ": exists (use --force to replace it)");
  if (options.full && (!options.snapshot_on.empty() || !options.pre.empty() ||
                       !options.post.empty() || options.max_snapshots || !options.min_interval.empty())) {
    std::fprintf(stderr, "ptprof: record: --full records the whole run: it takes no --snapshot-on, "
                         "--pre, --post, --max-snapshots or --min-interval\n");
    return kExitUsage;
  }
  auto policy = ParseNativeSnapshotPolicy(options);
  if (!policy) {
    std::fprintf(stderr, "ptprof: record: %s\n", policy.error().message.c_str());
    return kExitUsage;
  }
  // $PTPROF_FAKE_AUX replays a recorded stream instead of reading trace hardware (tests, and
  // trying the recorder on machines without it): the PMU's sysfs may then be a fixture tree.
  const char* fake = std::getenv("PTPROF_FAKE_AUX");
  const bool faked = fake && *fake;
  if (!faked) {
    hw::ReadinessQuery query = hw::DefaultQuery(options.backend);
    query.needs_kernel = options.trace_kernel;
    for (const std::string& text : options.snapshot_on)
      query.needs_tracepoints = query.needs_tracepoints || text.rfind("syscall", 0) == 0;
    const hw::HardwareReadiness ready = hw::CheckHardware(query);
    if (!ready.ready)
      return ReportBadInput("record --backend " + options.backend + ": " + ready.reason + "; " +
                            ready.alternative);
  }
  auto backend = options.backend == "cs_etm" ? CsEtmBackend(options) : IntelPtBackend(options);
  if (!backend) return ReportBadInput("record: " + backend.error().message);

  hw::HwRecordRequest request;
  request.argv = options.command;
  request.attr = backend->attr;
  request.align = backend->align;
  request.per_cpu = !options.per_thread;
  request.aux_bytes = std::max<uint64_t>(options.buffer_size, policy->pre_bytes);
  request.pre_bytes = policy->pre_bytes;
  request.full = options.full;
  // Drained every few ms, the area must hold what the hardware writes in between (perf's default
  // AUX area for an unprivileged user is 4 MiB too).
  if (options.full) request.aux_bytes = std::max<uint64_t>(options.buffer_size, uint64_t{4} << 20);
  request.policy = *policy;
  std::unique_ptr<hw::FakeAuxKernel> fake_kernel;
  if (faked) {
    auto replay = LoadFakeAuxReplay(fake);
    if (!replay) return ReportBadInput("record: PTPROF_FAKE_AUX: " + replay.error().message);
    const char* rate = std::getenv("PTPROF_FAKE_AUX_RATE");
    fake_kernel = std::make_unique<hw::FakeAuxKernel>(
        std::move(replay->trace), rate && *rate ? std::strtoull(rate, nullptr, 10) : 4096,
        std::move(replay->mappings));
    request.kernel = fake_kernel.get();
  }
  auto recording = hw::RecordHardware(request);
  if (!recording) return ReportBadInput("record: " + recording.error().message);
  fake_kernel.reset();
  const hw::SidebandFacts sideband = hw::ReadSidebandFacts(
      backend->attr, recording->sideband, static_cast<uint32_t>(recording->pid));
  if (!sideband.problem.empty())
    std::fprintf(stderr, "ptprof: record: warning: %s; the binaries come from /proc/PID/maps only\n",
                 sideband.problem.c_str());
  if (sideband.truncated || sideband.collision)
    std::fprintf(stderr, "ptprof: record: warning: the kernel flagged %llu of %llu AUX records "
                         "truncated and %llu with collisions: trace was lost there\n",
                 static_cast<unsigned long long>(sideband.truncated),
                 static_cast<unsigned long long>(sideband.aux_records),
                 static_cast<unsigned long long>(sideband.collision));
  auto description = Describe(options, *backend, *recording, sideband);
  if (!description) return ReportBadInput("record: " + description.error().message);

  const bool perf_data = EndsWith(options.output, ".data");
  const std::string data_path = perf_data ? options.output : options.output + ".tmp.data";
  if (auto st = perf::WritePerfDataFile(*description, data_path, perf_data ? options.force : true);
      !st)
    return ReportBadInput("record: " + st.error().message);
  if (!perf_data) {
    auto written = ArchiveRecording(options, *recording, sideband, faked, data_path);
    std::remove(data_path.c_str());
    if (!written) return ReportBadInput("record: " + written.error().message);
  }
  if (!options.quiet) {
    uint64_t bytes = 0;
    for (const auto& s : recording->snapshots) bytes += s.bytes.size();
    const std::string what =
        recording->full
            ? fmt::format("the whole run: {} stream(s)", recording->snapshots.size())
            : fmt::format("{} snapshot(s)", recording->snapshots.size());
    const std::string triggers =
        recording->full ? ""
                        : fmt::format("{} trigger(s) fired, {} dropped by --min-interval/"
                                      "--max-snapshots, {} trigger event(s) lost; ",
                                      recording->fired, recording->suppressed, recording->lost);
    std::fprintf(stderr, "ptprof: record: %s%s, %llu bytes of %s; %sprogram %s %d; wrote %s\n",
                 faked ? "(replaying PTPROF_FAKE_AUX, not hardware) " : "", what.c_str(),
                 static_cast<unsigned long long>(bytes), options.backend == "cs_etm" ? "ETM" : "PT",
                 triggers.c_str(), recording->signal ? "killed by signal" : "exit status",
                 recording->signal ? recording->signal : recording->exit_status,
                 options.output.c_str());
  }
  return kExitOk;
}

}  // namespace ptprof::cli
