// ptprof info: what an input holds.
#include <cinttypes>
#include <cstdio>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "decoders/pt/trace_census.h"
#include "sideband/file_bytes.h"
#include "src/cli/command.h"
#include "src/cli/etm_archive.h"
#include "src/cli/etm_snapshot.h"
#include "src/cli/info_archive.h"
#include "src/cli/info_perf_data.h"
#include "src/pipeline/input_kind.h"

namespace ptprof::cli {

namespace {

struct InfoOptions {
  std::string input;
  std::string format = "text";
  std::string extract_aux_dir;
};

std::string Hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%" PRIx64, v);
  return buf;
}

void PrintText(const std::string& input, const pt::TraceCensus& c) {
  std::printf("input:     %s\n", input.c_str());
  std::printf("kind:      raw Intel PT\n");
  std::printf("size:      %" PRIu64 " bytes\n", c.bytes);
  std::printf("streams:   1 (raw; no sideband: images come from --elf/--raw)\n");
  std::printf("psb:       %zu", c.psb_offsets.size());
  if (!c.psb_offsets.empty())
    std::printf(" (first at %s, last at %s)", Hex(c.psb_offsets.front()).c_str(),
                Hex(c.psb_offsets.back()).c_str());
  std::printf("\n");
  if (c.has_tsc)
    std::printf("tsc:       %s .. %s (%" PRIu64 " ticks)\n", Hex(c.first_tsc).c_str(),
                Hex(c.last_tsc).c_str(), c.last_tsc - c.first_tsc);
  else
    std::printf("tsc:       none\n");
  std::printf("packets:   %" PRIu64 "\n", c.packets);
  for (const auto& [name, count] : c.packets_by_kind)
    std::printf("  %-10s %" PRIu64 "\n", name.c_str(), count);
  auto has = [&](const char* name) { return c.packets_by_kind.count(name) != 0; };
  std::printf("timing:    %s%s%s%s\n", has("tsc") ? "tsc " : "", has("mtc") ? "mtc " : "",
              has("cyc") ? "cyc " : "", has("cbr") ? "cbr" : "");
  std::printf("unsynced:  %" PRIu64 " bytes\n", c.skipped_bytes);
  std::printf("errors:    %zu\n", c.errors.size());
  for (const auto& e : c.errors) std::printf("  at %s: %s\n", Hex(e.offset).c_str(), e.message.c_str());
}

void PrintJson(const std::string& input, const pt::TraceCensus& c) {
  nlohmann::ordered_json j;
  j["input"] = input;
  j["kind"] = "raw_pt";
  j["bytes"] = c.bytes;
  j["streams"] = nlohmann::json::array({{{"name", "raw"}, {"bytes", c.bytes}}});
  j["psb_offsets"] = c.psb_offsets;
  if (c.has_tsc) {
    j["first_tsc"] = c.first_tsc;
    j["last_tsc"] = c.last_tsc;
  }
  j["packets"] = c.packets;
  j["packets_by_kind"] = c.packets_by_kind;
  j["unsynced_bytes"] = c.skipped_bytes;
  nlohmann::ordered_json errors = nlohmann::json::array();
  for (const auto& e : c.errors) errors.push_back({{"offset", e.offset}, {"message", e.message}});
  j["errors"] = errors;
  std::printf("%s\n", j.dump().c_str());
}

int RunInfo(const InfoOptions& options) {
  auto kind = ClassifyPath(options.input);
  if (!kind) return ReportBadInput(kind.error().message);
  if (*kind == InputKind::kCoreSightSnapshot && options.extract_aux_dir.empty())
    return RunSnapshotInfo({options.input, options.format, {}, false, false});  // etm_snapshot.cc
  if (*kind == InputKind::kPerfData || *kind == InputKind::kPerfDataPipe)
    return RunPerfDataInfo({options.input, options.format, options.extract_aux_dir});
  if (*kind == InputKind::kPtar && options.extract_aux_dir.empty()) {
    auto etm = RestoreEtmArchive(options.input);  // a .ptar of a CoreSight input: etm_archive.cc
    if (!etm) return ReportBadInput(etm.error().message);
    if (*etm && (*etm)->kind == kCoreSightSnapshotSource)
      return RunSnapshotInfo({(*etm)->path, options.format, {}, false, false}, options.input);
    if (*etm)
      return RunPerfDataInfo({(*etm)->path, options.format, "", &(*etm)->manifest},
                             options.input);
  }
  if (*kind == InputKind::kPtar && options.extract_aux_dir.empty())
    return RunArchiveInfo(options.input, options.format);  // info_archive.cc
  if (!options.extract_aux_dir.empty())
    return ReportBadInput(options.input + ": --extract-aux needs a perf.data input");
  if (*kind != InputKind::kRawPt) {
    if (*kind == InputKind::kUnknown)
      return ReportBadInput(options.input + ": offset 0x0: not a trace ptprof can read (no PSB, no known magic)");
    return ReportBadInput(options.input + ": " + InputKindName(*kind) +
                          " input is recognised but not supported by this version yet");
  }
  auto bytes = ReadFileBytes(options.input);
  if (!bytes) return ReportBadInput(bytes.error().message);
  auto census = pt::TakeCensus(*bytes, pt::PtParams{});
  if (!census) return ReportBadInput(options.input + ": " + census.error().message);
  if (options.format == "json")
    PrintJson(options.input, *census);
  else
    PrintText(options.input, *census);
  return kExitOk;
}

}  // namespace

Command AddInfoCommand(CLI::App& parent) {
  auto options = std::make_shared<InfoOptions>();
  CLI::App* app = parent.add_subcommand("info", "Show what a trace input holds");
  app->add_option("input", options->input, "trace input: raw Intel PT, perf.data or .ptar")->required();
  app->add_option("--format", options->format, "text or json")
      ->check(CLI::IsMember({"text", "json"}));
  // perf.data: write each AUX stream to DIR/<stream>.bin (for tests and external decoders).
  app->add_option("--extract-aux", options->extract_aux_dir, "")->group("");
  return {app, [options] { return RunInfo(*options); }};
}

}  // namespace ptprof::cli
