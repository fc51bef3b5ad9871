// ptprof info on perf.data: events, records by type, CPUs, AUX streams, time span, the PT or
// CoreSight configuration, sideband counts, features.
#include "src/cli/info_perf_data.h"
#include "src/cli/info_archive.h"

#include <cinttypes>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "sideband/perf/perf_abi.h"
#include "sideband/perf/perf_data.h"
#include "src/cli/command.h"
#include "src/pipeline/session_perf_data.h"

namespace ptprof::cli {

namespace {

using namespace ptprof::perf;
using Json = nlohmann::ordered_json;

std::string Hex(uint64_t v) { return fmt::format("{:#x}", v); }

// The ptdump/ptxed options that decode this file's intel_pt streams (the parameters a perf.data
// session decodes with).
std::string PtDecodeOptions(const PerfData& d) {
  if (!d.intel_pt || !d.AuxAttr()) return "";
  const pt::PtParams params = PtParamsFromPerfData(d, nullptr);
  std::string out;
  if (params.cpu)
    out += fmt::format("--cpu {}/{}/{} ", params.cpu->family, params.cpu->model, params.cpu->stepping);
  if (params.mtc_freq) out += fmt::format("--mtc-freq {} ", params.mtc_freq);
  if (params.nom_freq) out += fmt::format("--nom-freq {} ", params.nom_freq);
  if (params.cpuid_0x15_eax)
    out += fmt::format("--cpuid-0x15.eax {} --cpuid-0x15.ebx {}", params.cpuid_0x15_eax, params.cpuid_0x15_ebx);
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

std::string ConfigText(const PerfData& d, const PerfAttr& a) {
  if (d.PmuName(a.attr) != "intel_pt") return "";
  std::string out;
  for (const auto& [name, value] : DecodeIntelPtConfig(a.attr.config)) {
    if (!out.empty()) out += ' ';
    out += value == 1 && name.find("period") == std::string::npos && name != "cyc_thresh" ? name
                                                                                        : fmt::format("{}={}", name, value);
  }
  return out;
}

std::map<std::string, uint64_t> SidebandCounts(const PerfData& d) {
  std::map<std::string, uint64_t> counts;
  for (const auto& r : d.sideband) ++counts[RecordTypeName(r.header.type).substr(12)];
  return counts;
}

void PrintText(const PerfData& d) {
  std::printf("input:     %s\n", d.name.c_str());
  std::printf("kind:      perf.data (%s mode)\n", d.pipe_mode ? "pipe" : "file");
  std::printf("size:      %" PRIu64 " bytes (data %s +%s)\n", d.file_size, Hex(d.data_offset).c_str(), Hex(d.data_size).c_str());
  const auto& f = d.features;
  if (!f.hostname.empty()) std::printf("host:      %s\n", f.hostname.c_str());
  if (!f.osrelease.empty()) std::printf("kernel:    %s\n", f.osrelease.c_str());
  if (!f.arch.empty()) std::printf("arch:      %s\n", f.arch.c_str());
  if (!f.cpudesc.empty()) std::printf("cpu:       %s (cpuid %s)\n", f.cpudesc.c_str(), f.cpuid.c_str());
  if (f.nr_cpus_online) std::printf("nrcpus:    %u online, %u available\n", *f.nr_cpus_online, *f.nr_cpus_available);
  if (!f.version.empty()) std::printf("perf:      %s\n", f.version.c_str());
  if (!f.cmdline.empty()) {
    std::string cmd;
    for (const auto& a : f.cmdline) cmd += (cmd.empty() ? "" : " ") + a;
    std::printf("cmdline:   %s\n", cmd.c_str());
  }
  std::printf("events:    %zu\n", d.attrs.size());
  for (size_t i = 0; i < d.attrs.size(); ++i) {
    const auto& a = d.attrs[i];
    std::printf("  #%zu %s: pmu %s (type %u), config %s, sample_type %s%s, %zu ids\n", i,
                a.name.empty() ? "(unnamed)" : a.name.c_str(), d.PmuName(a.attr).c_str(), a.attr.type,
                Hex(a.attr.config).c_str(), SampleTypeNames(a.attr.sample_type).c_str(),
                a.attr.sample_id_all() ? ", sample_id_all" : "", a.ids.size());
    std::string config = ConfigText(d, a);
    if (!config.empty()) std::printf("     pt config: %s\n", config.c_str());
  }
  std::printf("records:   %" PRIu64 " (unknown types %" PRIu64 ", undecodable %" PRIu64 ")\n", d.records,
              d.unknown_records, d.bad_records);
  for (const auto& [type, count] : d.record_counts)
    std::printf("  %-30s %" PRIu64 "\n", RecordTypeName(type).c_str(), count);
  std::printf("samples:   %" PRIu64 "\n", d.sample_count);
  std::string cpus;
  for (uint32_t c : d.cpus) cpus += (cpus.empty() ? "" : " ") + std::to_string(c);
  std::printf("cpus:      %s\n", cpus.empty() ? "unknown" : cpus.c_str());
  if (d.first_time) {
    std::printf("time:      %" PRIu64 " .. %" PRIu64 " ns (perf clock), %.6f s\n", *d.first_time, *d.last_time,
                static_cast<double>(*d.last_time - *d.first_time) / 1e9);
    if (auto clock = d.clock())
      std::printf("tsc:       %s .. %s\n", Hex(clock->PerfTimeToTsc(*d.first_time)).c_str(),
                  Hex(clock->PerfTimeToTsc(*d.last_time)).c_str());
  } else {
    std::printf("time:      unknown (no record carries a time)\n");
  }
  uint64_t aux_bytes = 0;
  for (const auto& s : d.aux_streams) aux_bytes += s.bytes;
  std::string aux_kind = d.auxtrace_info.empty() ? "none" : AuxtraceTypeName(d.auxtrace_info.front().type);
  std::printf("aux:       %s, %zu stream%s, %" PRIu64 " bytes\n", aux_kind.c_str(), d.aux_streams.size(),
              d.aux_streams.size() == 1 ? "" : "s", aux_bytes);
  for (const auto& s : d.aux_streams)
    std::printf("  %-10s %" PRIu64 " bytes in %zu buffer%s (idx %u, first at %s)%s\n", s.name.c_str(), s.bytes,
                s.buffers.size(), s.buffers.size() == 1 ? "" : "s", s.idx,
                s.buffers.empty() ? "-" : Hex(s.buffers.front().data_offset).c_str(), s.snapshot ? " snapshot" : "");
  uint64_t notified = 0;
  for (const auto& n : d.aux_notices) notified += n.aux.aux_size;
  std::printf("aux records: %zu, %" PRIu64 " bytes (truncated %" PRIu64 ", partial %" PRIu64 ", collision %" PRIu64
              ", overwrite %" PRIu64 ")\n",
              d.aux_notices.size(), notified, d.aux_truncated, d.aux_partial, d.aux_collision, d.aux_overwrite);
  if (d.aux_pmu_flags)
    std::printf("  pmu-specific flags %s%s\n", Hex(d.aux_pmu_flags).c_str(),
                d.cs_etm && (d.aux_pmu_flags & kAuxFlagCoreSightRaw) ? " (cs_etm: raw trace, not in CoreSight formatter frames)" : "");
  if (!d.aux_notices.empty() && d.aux_streams.empty())
    std::printf("missing:   the kernel wrote AUX data (PERF_RECORD_AUX) but the file holds no AUXTRACE buffers\n");
  if (d.intel_pt) {
    const auto& p = *d.intel_pt;
    std::printf("intel_pt:  pmu type %" PRIu64 ", tsc:ctc %u/%u, max non-turbo ratio %" PRIu64 ", snapshot %s, per-cpu %s,"
                " filter \"%s\"\n", p.pmu_type, p.tsc_ctc_ratio_n, p.tsc_ctc_ratio_d, p.max_non_turbo_ratio,
                p.snapshot_mode ? "yes" : "no", p.per_cpu_mmaps ? "yes" : "no", p.filter.c_str());
    std::printf("  bits: tsc %s, noretcomp %s, mtc %s, mtc_freq %s, cyc %s\n", Hex(p.tsc_bit).c_str(),
                Hex(p.noretcomp_bit).c_str(), Hex(p.mtc_bit).c_str(), Hex(p.mtc_freq_bits).c_str(), Hex(p.cyc_bit).c_str());
    std::string opts = PtDecodeOptions(d);
    if (!opts.empty()) std::printf("  decode with: %s\n", opts.c_str());
  }
  if (d.cs_etm) {
    const auto& e = *d.cs_etm;
    std::printf("cs_etm:    header v%" PRIu64 ", pmu type %u, %u cpus, snapshot %s\n", e.header_version, e.pmu_type,
                e.nr_cpus, e.snapshot ? "yes" : "no");
    for (const auto& c : e.cpus) {
      std::string regs;
      for (const auto& [name, value] : c.params) regs += fmt::format(" {}={:#x}", name, value);
      std::printf("  cpu%-3" PRIu64 " %s%s\n", c.cpu, CsEtmKindName(c.kind), regs.c_str());
    }
  }
  if (auto clock = d.clock())
    std::printf("clock:     time_shift %u, time_mult %u, time_zero %" PRIu64 "\n", clock->time_shift, clock->time_mult,
                clock->time_zero);
  std::printf("lost:      %" PRIu64 " events, %" PRIu64 " samples\n", d.lost_events, d.lost_samples);
  std::string sideband;
  for (const auto& [name, count] : SidebandCounts(d)) sideband += fmt::format(" {} {}", name, count);
  std::printf("sideband:  %zu events:%s\n", d.sideband.size(), sideband.c_str());
  std::string features;
  for (int id : f.present) features += " " + FeatureName(id);
  std::printf("features: %s\n", features.empty() ? " none" : features.c_str());
  if (!f.build_ids.empty()) std::printf("build ids: %zu\n", f.build_ids.size());
  for (const auto& p : d.problems) std::printf("problem:   %s\n", p.c_str());
}

// Whether the archive's manifest says more than the perf.data: what a recorder stored.
bool RecorderNotes(const archive::Manifest* m) {
  return m && (!m->triggers.empty() || !m->pt_config.empty());
}

void PrintJson(const PerfData& d, const archive::Manifest* manifest) {
  Json j;
  j["input"] = d.name;
  j["kind"] = d.pipe_mode ? "perf_data_pipe" : "perf_data";
  j["bytes"] = d.file_size;
  j["data_offset"] = d.data_offset;
  j["data_size"] = d.data_size;
  const auto& f = d.features;
  Json host;
  host["hostname"] = f.hostname;
  host["osrelease"] = f.osrelease;
  host["arch"] = f.arch;
  host["cpudesc"] = f.cpudesc;
  host["cpuid"] = f.cpuid;
  if (f.nr_cpus_online) host["nr_cpus_online"] = *f.nr_cpus_online, host["nr_cpus_available"] = *f.nr_cpus_available;
  host["perf_version"] = f.version;
  host["cmdline"] = f.cmdline;
  j["host"] = host;
  Json events = Json::array();
  for (const auto& a : d.attrs) {
    Json e;
    e["name"] = a.name;
    e["pmu"] = d.PmuName(a.attr);
    e["type"] = a.attr.type;
    e["config"] = a.attr.config;
    e["sample_type"] = a.attr.sample_type;
    e["sample_type_names"] = SampleTypeNames(a.attr.sample_type);
    e["sample_id_all"] = a.attr.sample_id_all();
    e["ids"] = a.ids;
    if (e["pmu"] == "intel_pt") {
      Json config;
      for (const auto& [name, value] : DecodeIntelPtConfig(a.attr.config)) config[name] = value;
      e["pt_config"] = config;
    }
    events.push_back(e);
  }
  j["events"] = events;
  j["records"] = d.records;
  Json counts;
  for (const auto& [type, count] : d.record_counts) counts[RecordTypeName(type)] = count;
  j["records_by_type"] = counts;
  j["unknown_records"] = d.unknown_records;
  j["undecodable_records"] = d.bad_records;
  j["samples"] = d.sample_count;
  j["cpus"] = d.cpus;
  if (d.first_time) {
    j["first_time_ns"] = *d.first_time;
    j["last_time_ns"] = *d.last_time;
    if (auto clock = d.clock()) {
      j["first_tsc"] = clock->PerfTimeToTsc(*d.first_time);
      j["last_tsc"] = clock->PerfTimeToTsc(*d.last_time);
    }
  }
  j["aux_kind"] = d.auxtrace_info.empty() ? "" : AuxtraceTypeName(d.auxtrace_info.front().type);
  Json streams = Json::array();
  for (const auto& s : d.aux_streams) {
    Json st;
    st["name"] = s.name;
    st["idx"] = s.idx;
    if (s.cpu) st["cpu"] = *s.cpu;
    if (s.tid) st["tid"] = *s.tid;
    st["bytes"] = s.bytes;
    st["snapshot"] = s.snapshot;
    Json buffers = Json::array();
    for (const auto& b : s.buffers)
      buffers.push_back({{"record_offset", b.record_offset}, {"data_offset", b.data_offset}, {"size", b.size},
                         {"aux_offset", b.aux_offset}, {"reference", b.reference}});
    st["buffers"] = buffers;
    streams.push_back(st);
  }
  j["streams"] = streams;
  j["aux_records"] = {{"count", d.aux_notices.size()}, {"truncated", d.aux_truncated}, {"partial", d.aux_partial},
                      {"collision", d.aux_collision}, {"overwrite", d.aux_overwrite},
                      {"pmu_flags", d.aux_pmu_flags}};
  if (d.intel_pt) {
    const auto& p = *d.intel_pt;
    j["intel_pt"] = {{"pmu_type", p.pmu_type}, {"time_shift", p.time_shift}, {"time_mult", p.time_mult},
                     {"time_zero", p.time_zero}, {"cap_user_time_zero", p.cap_user_time_zero},
                     {"tsc_bit", p.tsc_bit}, {"noretcomp_bit", p.noretcomp_bit}, {"mtc_bit", p.mtc_bit},
                     {"mtc_freq_bits", p.mtc_freq_bits}, {"cyc_bit", p.cyc_bit},
                     {"have_sched_switch", p.have_sched_switch}, {"snapshot_mode", p.snapshot_mode},
                     {"per_cpu_mmaps", p.per_cpu_mmaps}, {"tsc_ctc_ratio_n", p.tsc_ctc_ratio_n},
                     {"tsc_ctc_ratio_d", p.tsc_ctc_ratio_d}, {"max_non_turbo_ratio", p.max_non_turbo_ratio},
                     {"filter", p.filter}, {"decode_options", PtDecodeOptions(d)}};
  }
  if (d.cs_etm) {
    const auto& e = *d.cs_etm;
    Json cpus = Json::array();
    for (const auto& c : e.cpus) {
      Json regs;
      for (const auto& [name, value] : c.params) regs[name] = value;
      cpus.push_back({{"cpu", c.cpu}, {"kind", CsEtmKindName(c.kind)}, {"magic", c.magic}, {"registers", regs}});
    }
    j["cs_etm"] = {{"header_version", e.header_version}, {"pmu_type", e.pmu_type}, {"nr_cpus", e.nr_cpus},
                   {"snapshot", e.snapshot}, {"cpus", cpus}};
  }
  if (auto clock = d.clock())
    j["clock"] = {{"time_shift", clock->time_shift}, {"time_mult", clock->time_mult}, {"time_zero", clock->time_zero}};
  j["lost_events"] = d.lost_events;
  j["lost_samples"] = d.lost_samples;
  j["sideband"] = SidebandCounts(d);
  Json features = Json::array();
  for (int id : f.present) features.push_back(FeatureName(id));
  j["features"] = features;
  Json build_ids = Json::array();
  for (const auto& b : f.build_ids) build_ids.push_back({{"pid", b.pid}, {"build_id", b.build_id}, {"file", b.filename}});
  j["build_ids"] = build_ids;
  j["problems"] = d.problems;
  if (RecorderNotes(manifest)) j["manifest"] = archive::ManifestToJson(*manifest);
  std::printf("%s\n", j.dump().c_str());
}

Status ExtractAux(const PerfData& d, const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return Fail(dir + ": cannot create directory: " + ec.message());
  for (const auto& s : d.aux_streams) {
    std::string path = (std::filesystem::path(dir) / (s.name + ".bin")).string();
    const SharedBytes bytes = d.StreamBytes(s);
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    if (!out) return Fail(path + ": cannot write");
  }
  return {};
}

}  // namespace

int RunPerfDataInfo(const PerfDataInfoOptions& options, const std::string& label) {
  auto data = ReadPerfData(options.input);
  if (!data) return ReportBadInput(data.error().message);
  if (!label.empty()) data->name = label;
  if (!options.extract_aux_dir.empty()) {
    auto status = ExtractAux(*data, options.extract_aux_dir);
    if (!status) return ReportBadInput(status.error().message);
  }
  if (options.format == "json") {
    PrintJson(*data, options.manifest);
  } else {
    PrintText(*data);
    if (RecorderNotes(options.manifest)) {
      std::printf("archive:   %s (%s)\n", options.manifest->source.kind.c_str(),
                  options.manifest->tool.c_str());
      PrintTriggerLines(options.manifest->triggers);
    }
  }
  return kExitOk;
}

}  // namespace ptprof::cli
