#include "src/report/sweep_report.h"

#include <set>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "src/model/json_text.h"

namespace ptprof {

namespace {

std::set<std::string> PacketKinds(const std::vector<sweep::SweepRow>& rows) {
  std::set<std::string> kinds;
  for (const auto& row : rows)
    for (const auto& [kind, count] : row.packets) kinds.insert(kind);
  return kinds;
}

std::string OverheadText(const sweep::SweepRow& row) {
  if (!row.overhead) return "not measured (emulated)";
  return fmt::format("{:.2f}% [{:.2f}, {:.2f}] n={}", row.overhead->median_percent,
                     row.overhead->min_percent, row.overhead->max_percent,
                     row.overhead->traced_seconds.size());
}

std::string Opt(const std::optional<double>& v, const char* format) {
  return v ? fmt::format(fmt::runtime(format), *v) : std::string("-");
}

std::string Bandwidth(const sweep::SweepRow& row) {
  return fmt::format("{:.1f}", row.BytesPerSecond() / 1e6);
}

}  // namespace

void WriteSweepText(std::FILE* out, const SweepReport& report) {
  std::string text;
  text += fmt::format("{:<16} {:<7} {:<34} {:>12} {:>8} {:>9} {:>11} {:>12} {:>7}  {}\n",
                      "workload", "backend", "configuration", "trace bytes", "B/insn", "MB/s",
                      "median ns", "median insn", "TRF", "overhead");
  for (const auto& row : report.rows) {
    if (!row.ok) {
      text += fmt::format("{:<16} {:<7} {:<34} FAILED: {}\n", row.workload, row.backend,
                          row.config.Label(), row.error);
      continue;
    }
    const bool res = row.has_resolution && row.resolution.has_deltas();
    text += fmt::format(
        "{:<16} {:<7} {:<34} {:>12} {:>8} {:>9} {:>11} {:>12} {:>7}  {}\n", row.workload,
        row.backend, row.config.Label(), row.trace_bytes,
        row.insns ? fmt::format("{:.4f}", row.BytesPerInsn()) : std::string("-"), Bandwidth(row),
        res ? fmt::format("{:.1f}", row.resolution.median_ns) : std::string("-"),
        res ? fmt::format("{:.0f}", row.resolution.median_insns) : std::string("-"),
        Opt(row.trf, "{:.3g}"), OverheadText(row));
  }
  text += "MB/s: trace bytes per second of traced execution";
  bool emulated = false;
  for (const auto& row : report.rows) emulated = emulated || row.seconds_emulated;
  text += emulated ? " (emulated backend: seconds of the cycle model, 2 GHz)\n" : "\n";

  const std::set<std::string> kinds = PacketKinds(report.rows);
  if (!kinds.empty()) {
    text += "\npackets by kind\n";
    text += fmt::format("{:<16} {:<34}", "workload", "configuration");
    for (const auto& kind : kinds) text += fmt::format(" {:>10}", kind);
    text += "\n";
    for (const auto& row : report.rows) {
      if (!row.ok || !row.has_packets) continue;
      text += fmt::format("{:<16} {:<34}", row.workload, row.config.Label());
      for (const auto& kind : kinds) {
        auto it = row.packets.find(kind);
        text += fmt::format(" {:>10}", it == row.packets.end() ? 0 : it->second);
      }
      text += "\n";
    }
  }
  if (!report.bounds.empty()) {
    text += "\ntrace-size bounds over the grid\n";
    text += fmt::format("{:<16} {:<7} {:>12} {:<34} {:>12} {:<34}\n", "workload", "backend",
                        "lower bytes", "at", "upper bytes", "at");
    for (const auto& b : report.bounds)
      text += fmt::format("{:<16} {:<7} {:>12} {:<34} {:>12} {:<34}\n", b.workload, b.backend,
                          b.min_bytes, b.min_config, b.max_bytes, b.max_config);
  }
  if (!report.branch_costs.empty()) {
    text += "\none conditional branch per iteration (Omega - Epsilon)\n";
    text += fmt::format("{:<34} {:>12} {:>12} {:>10} {:>10} {:>10} {:>10} {:>11}\n",
                        "configuration", "Omega bytes", "Eps. bytes", "B/iter", "TNT/iter",
                        "Omega ovh", "Eps. ovh", "normalised");
    for (const auto& c : report.branch_costs)
      text += fmt::format("{:<34} {:>12.0f} {:>12.0f} {:>10.4f} {:>10.4f} {:>10} {:>10} {:>11}\n",
                          c.config, c.omega_bytes, c.epsilon_bytes, c.bytes_per_iteration,
                          c.tnt_packets_per_iteration, Opt(c.omega_overhead, "{:.2f}%"),
                          Opt(c.epsilon_overhead, "{:.2f}%"),
                          c.normalised_overhead ? fmt::format("{:.2f}%", *c.normalised_overhead)
                                                : std::string("not measured"));
  }
  size_t failed = 0;
  for (const auto& row : report.rows) failed += row.ok ? 0 : 1;
  if (failed != 0) text += fmt::format("\n{} of {} rows failed\n", failed, report.rows.size());
  std::fputs(text.c_str(), out);
}

void WriteSweepCsv(std::FILE* out, const SweepReport& report) {
  const std::set<std::string> kinds = PacketKinds(report.rows);
  std::string text =
      "workload,backend,axis,psb_period,mtc_period,cyc_threshold,tsc,ok,error,trace_bytes,insns,"
      "bytes_per_insn,traced_seconds,seconds_emulated,bytes_per_second,timed_events,median_ns,"
      "median_insns,trf,overhead_median_percent,overhead_min_percent,overhead_max_percent";
  for (const auto& kind : kinds) text += ",packets_" + kind;
  text += "\n";
  for (const auto& row : report.rows) {
    const bool res = row.ok && row.has_resolution && row.resolution.has_deltas();
    text += fmt::format(
        "{},{},{},{},{},{},{},{},{},{},{},{:.6f},{:.9f},{},{:.1f},{},{},{},{},{},{},{}", row.workload,
        row.backend, sweep::SweepAxisName(row.axis), row.config.psb_period,
        row.config.mtc_period ? std::to_string(*row.config.mtc_period) : "off",
        row.config.cyc_threshold ? std::to_string(*row.config.cyc_threshold) : "off",
        row.config.tsc ? "on" : "off", row.ok ? 1 : 0, CsvQuoted(row.error), row.trace_bytes,
        row.insns, row.BytesPerInsn(), row.traced_seconds, row.seconds_emulated ? 1 : 0,
        row.BytesPerSecond(), row.resolution.timed_events,
        res ? fmt::format("{:.3f}", row.resolution.median_ns) : "",
        res ? fmt::format("{:.0f}", row.resolution.median_insns) : "",
        row.trf ? fmt::format("{:.6g}", *row.trf) : "",
        row.overhead ? fmt::format("{:.3f}", row.overhead->median_percent) : "",
        row.overhead ? fmt::format("{:.3f}", row.overhead->min_percent) : "",
        row.overhead ? fmt::format("{:.3f}", row.overhead->max_percent) : "");
    for (const auto& kind : kinds) {
      auto it = row.packets.find(kind);
      text += "," + std::to_string(it == row.packets.end() ? 0 : it->second);
    }
    text += "\n";
  }
  std::fputs(text.c_str(), out);
}

void WriteSweepJson(std::FILE* out, const SweepReport& report) {
  using nlohmann::json;
  json doc;
  doc["rows"] = json::array();
  for (const auto& row : report.rows) {
    json r;
    r["workload"] = row.workload;
    r["backend"] = row.backend;
    r["axis"] = sweep::SweepAxisName(row.axis);
    r["config"] = {{"psb_period", row.config.psb_period},
                   {"mtc_period", row.config.mtc_period ? json(*row.config.mtc_period) : json()},
                   {"cyc_threshold",
                    row.config.cyc_threshold ? json(*row.config.cyc_threshold) : json()},
                   {"tsc", row.config.tsc}};
    r["ok"] = row.ok;
    if (!row.ok) {
      r["error"] = row.error;
      doc["rows"].push_back(r);
      continue;
    }
    r["trace_bytes"] = row.trace_bytes;
    r["insns"] = row.insns;
    r["bytes_per_insn"] = row.BytesPerInsn();
    r["traced_seconds"] = row.traced_seconds;
    r["seconds_emulated"] = row.seconds_emulated;
    r["bytes_per_second"] = row.BytesPerSecond();
    r["packets"] = row.packets;
    if (row.has_resolution)
      r["resolution"] = {{"blocks", row.resolution.blocks},
                         {"timed_events", row.resolution.timed_events},
                         {"deltas", row.resolution.deltas},
                         {"median_ns", row.resolution.median_ns},
                         {"median_insns", row.resolution.median_insns}};
    r["trf"] = row.trf ? json(*row.trf) : json();
    if (row.overhead)
      r["overhead"] = {{"median_percent", row.overhead->median_percent},
                       {"min_percent", row.overhead->min_percent},
                       {"max_percent", row.overhead->max_percent},
                       {"untraced_seconds", row.overhead->untraced_seconds},
                       {"traced_seconds", row.overhead->traced_seconds}};
    else
      r["overhead"] = "not measured (emulated)";
    if (!row.trace_files.empty()) r["trace_files"] = row.trace_files;
    doc["rows"].push_back(r);
  }
  doc["bounds"] = json::array();
  for (const auto& b : report.bounds)
    doc["bounds"].push_back({{"workload", b.workload}, {"backend", b.backend},
                             {"min_bytes", b.min_bytes}, {"min_config", b.min_config},
                             {"max_bytes", b.max_bytes}, {"max_config", b.max_config},
                             {"rows", b.rows}});
  doc["epsilon_omega"] = json::array();
  for (const auto& c : report.branch_costs) {
    json j = {{"backend", c.backend}, {"config", c.config}, {"iterations", c.iterations},
              {"omega_bytes", c.omega_bytes}, {"epsilon_bytes", c.epsilon_bytes},
              {"bytes_per_iteration", c.bytes_per_iteration},
              {"tnt_packets_per_iteration", c.tnt_packets_per_iteration}};
    j["normalised_overhead_percent"] =
        c.normalised_overhead ? json(*c.normalised_overhead) : json("not measured");
    doc["epsilon_omega"].push_back(j);
  }
  std::fputs((doc.dump(2) + "\n").c_str(), out);
}

}  // namespace ptprof
