#include "src/cli/etm_snapshot.h"

#include <cinttypes>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "decoders/etm/arm_disassembler.h"
#include "decoders/etm/insn_expansion.h"
#include "decoders/etm/range_expander.h"
#include "decoders/etm/snapshot_decode.h"
#include "src/cli/command.h"
#include "src/report/event_writer.h"

namespace ptprof::cli {

namespace {

using etm::SnapshotDecode;

Result<SnapshotDecode> Open(const SnapshotCommandOptions& options, bool packets_only) {
  etm::SnapshotDecodeRequest request;
  request.sources = options.sources;
  request.options.packets_only = packets_only;
  request.options.src_addr_n = options.src_addr_n;
  auto d = etm::OpenSnapshotDecode(options.dir, request);
  if (d)
    for (const std::string& w : d->warnings) std::fprintf(stderr, "ptprof: warning: %s\n", w.c_str());
  return d;
}

// Counts what a decode produced, for info.
class Census : public EventSink {
 public:
  void OnEvent(const TraceEvent& e) override { ++by_kind_[EventName(e)]; }
  const std::map<std::string, uint64_t>& by_kind() const { return by_kind_; }

 private:
  std::map<std::string, uint64_t> by_kind_;
};

// A snapshot file as info shows it: its path, or its path inside the snapshot when it was
// restored from an archive (the temporary directory means nothing to the reader).
std::string Shown(const std::string& file, const std::string& dir, const std::string& label) {
  if (label.empty() || file.compare(0, dir.size(), dir) != 0) return file;
  return file.substr(dir.size() + (file.size() > dir.size() && file[dir.size()] == '/'));
}

void WarnGaps(const std::string& dir, const etm::EtmDecodeStats& stats) {
  if (stats.fatal_errors)
    std::fprintf(stderr, "ptprof: warning: %s: %" PRIu64 " decoder error(s); decoding resumed after each\n",
                 dir.c_str(), stats.fatal_errors);
}

}  // namespace

int RunSnapshotInfo(const SnapshotCommandOptions& options, const std::string& label) {
  auto d = Open(options, false);
  if (!d) return ReportBadInput(d.error().message);
  Census census;
  etm::EtmDecodeStats stats = d->decoder->Decode(d->trace, census);
  uint64_t memory_bytes = 0;
  for (const auto& m : d->memory) memory_bytes += m.bytes->size();
  if (options.format == "json") {
    nlohmann::ordered_json j;
    j["input"] = label.empty() ? options.dir : label;
    j["kind"] = "coresight_snapshot";
    nlohmann::ordered_json buffers = nlohmann::json::array();
    for (const auto& b : d->snapshot.buffers)
      buffers.push_back({{"name", b.name}, {"file", Shown(b.file, options.dir, label)}, {"format", b.format}});
    j["buffers"] = buffers;
    j["decoded_buffer"] = d->plan.buffer.name;
    j["bytes"] = d->trace.size();
    nlohmann::ordered_json sources = nlohmann::json::array();
    for (const auto& s : d->plan.sources) {
      nlohmann::ordered_json src = {{"name", s.source}, {"protocol", etm::ProtocolName(s.protocol)},
                                    {"trace_id", s.trace_id}};
      if (!s.core.empty()) {
        src["core"] = s.core;
        src["cpu"] = s.cpu;
      }
      sources.push_back(src);
    }
    j["streams"] = sources;
    j["memory_regions"] = d->memory.size();
    j["memory_bytes"] = memory_bytes;
    j["ranges"] = stats.ranges;
    j["instructions"] = stats.instructions;
    j["gaps"] = stats.gaps;
    j["decoder_errors"] = stats.fatal_errors;
    j["events"] = census.by_kind();
    std::printf("%s\n", j.dump().c_str());
    return kExitOk;
  }
  std::printf("input:     %s\n", (label.empty() ? options.dir : label).c_str());
  std::printf("kind:      CoreSight snapshot directory\n");
  for (const auto& b : d->snapshot.buffers)
    std::printf("buffer:    %s (%s, %s)%s\n", b.name.c_str(), b.format.c_str(), Shown(b.file, options.dir, label).c_str(),
                b.name == d->plan.buffer.name ? "  <- decoded" : "");
  std::printf("size:      %zu bytes\n", d->trace.size());
  std::printf("streams:   %zu\n", d->plan.sources.size());
  for (const auto& s : d->plan.sources)
    std::printf("  %-10s %-6s trace id 0x%02x%s%s\n", s.source.c_str(), etm::ProtocolName(s.protocol),
                s.trace_id, s.core.empty() ? "" : "  core ", s.core.c_str());
  for (const auto& s : d->plan.skipped) std::printf("  skipped:  %s\n", s.c_str());
  std::printf("memory:    %zu region(s), %" PRIu64 " bytes\n", d->memory.size(), memory_bytes);
  std::printf("decoded:   %" PRIu64 " instruction ranges, %" PRIu64 " instructions, %" PRIu64
              " gaps, %" PRIu64 " decoder errors\n",
              stats.ranges, stats.instructions, stats.gaps, stats.fatal_errors);
  for (const auto& [kind, count] : census.by_kind())
    std::printf("  %-16s %" PRIu64 "\n", kind.c_str(), count);
  return kExitOk;
}

int RunSnapshotDump(const SnapshotCommandOptions& options) {
  auto d = Open(options, true);
  if (!d) return ReportBadInput(d.error().message);
  std::string pending;
  etm::EtmDecodeStats stats = d->decoder->ListPackets(d->trace, [&](const std::string& line) {
    if (options.format == "jsonl") {
      pending += nlohmann::json({{"packet", line}}).dump();
    } else {
      pending += line;
    }
    pending += '\n';
    if (pending.size() >= (1u << 16)) {
      std::fwrite(pending.data(), 1, pending.size(), stdout);
      pending.clear();
    }
  });
  std::fwrite(pending.data(), 1, pending.size(), stdout);
  std::fflush(stdout);
  WarnGaps(options.dir, stats);
  return kExitOk;
}

int RunSnapshotDecode(const SnapshotCommandOptions& options) {
  auto d = Open(options, false);
  if (!d) return ReportBadInput(d.error().message);
  EventWriterOptions writer_options;
  writer_options.format = options.format == "jsonl" ? EventFormat::kJsonl : EventFormat::kText;
  writer_options.show_cpu = d->plan.sources.size() > 1;
  writer_options.disassemble = etm::ArmDisassembler::FormatOnThisThread;
  EventWriter writer(stdout, writer_options);
  etm::RangeExpander expander(d->memory);
  etm::InsnExpansion expansion(expander, writer);
  EventSink& sink = options.insn ? static_cast<EventSink&>(expansion) : writer;
  etm::EtmDecodeStats stats = d->decoder->Decode(d->trace, sink);
  WarnGaps(options.dir, stats);
  if (options.verbose)
    std::fprintf(stderr, "ptprof: %s: %s\n", options.dir.c_str(), etm::HowDecoded(stats).c_str());
  return kExitOk;
}

}  // namespace ptprof::cli
