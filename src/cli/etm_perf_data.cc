#include "src/cli/etm_perf_data.h"

#include <cinttypes>
#include <cstdio>
#include <set>

#include "decoders/etm/arm_disassembler.h"
#include "decoders/etm/etm_decoder.h"
#include "decoders/etm/perf_etm_config.h"
#include "decoders/etm/range_expander.h"
#include "sideband/file_bytes.h"
#include "sideband/perf/perf_data.h"
#include "src/cli/command.h"
#include "src/pipeline/session_perf_data.h"
#include "src/report/event_writer.h"

namespace ptprof::cli {

namespace {

constexpr uint64_t kCsEtmUnformatted = 0x100;  // PERF_AUX_FLAG_CORESIGHT_FORMAT_RAW

void Warn(const std::string& message) { std::fprintf(stderr, "ptprof: warning: %s\n", message.c_str()); }

// The code of every executable mapping whose binary is found, each binary reported once when not.
std::vector<etm::MemoryImage> LoadMappings(const perf::PerfData& data, const PerfEtmCommandOptions& o) {
  std::vector<etm::MemoryImage> images;
  std::set<std::string> missing;
  std::set<std::pair<uint64_t, std::string>> seen;
  for (const perf::PerfRecord& record : data.sideband) {
    const auto* mmap = std::get_if<perf::MmapRecord>(&record.body);
    if (!mmap || !mmap->executable || mmap->filename.empty() || mmap->filename[0] == '[') continue;
    if (!seen.insert({mmap->addr, mmap->filename}).second) continue;
    std::string file = FindBinary(mmap->filename, "", o.symfs, o.buildid_dir);
    if (file.empty()) {
      if (missing.insert(mmap->filename).second)
        Warn(data.name + ": binary " + mmap->filename + " not found (--symfs): its code is unknown");
      continue;
    }
    auto bytes = ReadFileRange(file, mmap->pgoff, mmap->len);
    if (!bytes) {
      Warn(bytes.error().message);
      continue;
    }
    char where[64];
    std::snprintf(where, sizeof where, " (mmap at 0x%" PRIx64 ")", mmap->addr);
    images.push_back(etm::MemoryImage{mmap->addr, "",
                                      std::make_shared<const std::vector<uint8_t>>(std::move(*bytes)),
                                      file + where});
  }
  return images;
}

// Expands blocks into instructions on their way to the writer.
class InsnExpansion : public EventSink {
 public:
  InsnExpansion(const etm::RangeExpander& expander, EventSink& next) : expander_(expander), next_(next) {}
  void OnEvent(const TraceEvent& e) override {
    if (std::holds_alternative<ExecBlock>(e.body))
      expander_.Expand(e, [this](const TraceEvent& insn) { next_.OnEvent(insn); });
    else
      next_.OnEvent(e);
  }

 private:
  const etm::RangeExpander& expander_;
  EventSink& next_;
};

// Passes events on but not the end: several AUX runs go to one writer.
class NoEnd : public EventSink {
 public:
  explicit NoEnd(EventSink& next) : next_(next) {}
  void OnEvent(const TraceEvent& e) override { next_.OnEvent(e); }
  void OnEnd() override {}

 private:
  EventSink& next_;
};

TraceEvent MissingData(uint64_t offset, int32_t cpu, const std::string& detail) {
  TraceEvent ev;
  ev.header.offset = offset;
  ev.header.cpu = cpu;
  TraceGap gap;
  gap.reason = GapReason::kMissingData;
  gap.detail = detail;
  ev.body = gap;
  return ev;
}

}  // namespace

std::optional<int> RunPerfEtmDecode(const PerfEtmCommandOptions& options) {
  auto bytes = ReadFileBytes(options.path);
  if (!bytes) return std::nullopt;
  auto data = perf::ParsePerfData(std::move(*bytes), options.path);
  if (!data || !data->cs_etm) return std::nullopt;

  std::vector<etm::SourceConfig> configs;
  for (const perf::CsEtmCpu& cpu : data->cs_etm->cpus) {
    auto cfg = etm::SourceConfigFromPerf(perf::CsEtmKindName(cpu.kind), static_cast<int>(cpu.cpu), cpu.params);
    if (!cfg) {
      Warn(options.path + ": AUXTRACE_INFO: " + cfg.error().message);
      continue;
    }
    configs.push_back(std::move(*cfg));
  }
  if (configs.empty()) return ReportBadInput(options.path + ": AUXTRACE_INFO: no CPU with an ETMv4 or ETE configuration");

  std::vector<const perf::AuxStream*> streams;
  for (const perf::AuxStream& s : data->aux_streams) {
    if (options.streams.empty()) {
      streams.push_back(&s);
      continue;
    }
    for (const std::string& name : options.streams)
      if (s.name == name) streams.push_back(&s);
  }
  if (!options.streams.empty() && streams.size() != options.streams.size()) {
    std::string names;
    for (const perf::AuxStream& s : data->aux_streams) names += (names.empty() ? "" : ", ") + s.name;
    return ReportBadInput(options.path + ": no such stream (there are: " + (names.empty() ? "none" : names) + ")");
  }

  const std::vector<etm::MemoryImage> memory = LoadMappings(*data, options);
  etm::ArmDisassembler disassembler;
  EventWriterOptions writer_options;
  writer_options.format = options.format == "jsonl" ? EventFormat::kJsonl : EventFormat::kText;
  writer_options.show_cpu = streams.size() > 1;
  writer_options.disassemble = [&disassembler](const Instruction& insn) { return disassembler.Format(insn); };
  EventWriter writer(stdout, writer_options);
  etm::RangeExpander expander(memory);
  InsnExpansion expansion(expander, writer);
  NoEnd sink(options.insn ? static_cast<EventSink&>(expansion) : writer);

  const bool unformatted = (data->aux_pmu_flags & kCsEtmUnformatted) != 0;
  uint64_t aux_written = 0;
  for (const perf::AuxNotice& n : data->aux_notices) aux_written += n.aux.aux_size;
  if (data->aux_streams.empty() && aux_written > 0) {
    // The kernel wrote trace that the file does not hold: say so in the flow and on stderr.
    std::string detail = "the kernel wrote " + std::to_string(aux_written) + " bytes of AUX data (" +
                         std::to_string(data->aux_notices.size()) +
                         " PERF_RECORD_AUX) but the file holds no AUXTRACE data";
    sink.OnEvent(MissingData(0, kUnknownId, detail));
    Warn(options.path + ": " + detail);
  }
  for (const perf::AuxStream* stream : streams) {
    const int32_t cpu = stream->cpu ? static_cast<int32_t>(*stream->cpu) : kUnknownId;
    std::vector<etm::SourceConfig> sources;
    if (unformatted) {
      // Raw trace carries one trace unit's packets without IDs: the stream's own CPU.
      for (const etm::SourceConfig& c : configs)
        if (stream->cpu && c.cpu == static_cast<int>(*stream->cpu)) sources.push_back(c);
      if (sources.empty()) {
        Warn(options.path + ": stream " + stream->name +
             ": unformatted trace needs the configuration of its CPU, which AUXTRACE_INFO lacks");
        continue;
      }
    } else {
      sources = configs;
    }
    // Each run of contiguous AUX buffers is decoded on its own; a hole between runs is a gap.
    uint64_t offset = 0;
    size_t i = 0;
    while (i < stream->buffers.size()) {
      size_t j = i + 1;
      while (j < stream->buffers.size() &&
             stream->buffers[j].aux_offset == stream->buffers[j - 1].aux_offset + stream->buffers[j - 1].size)
        ++j;
      std::vector<uint8_t> run;
      for (size_t k = i; k < j; ++k) {
        const perf::AuxBuffer& b = stream->buffers[k];
        if (b.data_offset + b.size <= data->bytes.size())
          run.insert(run.end(), data->bytes.begin() + static_cast<ptrdiff_t>(b.data_offset),
                     data->bytes.begin() + static_cast<ptrdiff_t>(b.data_offset + b.size));
      }
      if (i > 0) {
        const perf::AuxBuffer& prev = stream->buffers[i - 1];
        sink.OnEvent(MissingData(offset, cpu, "AUX data missing between AUX offsets " +
                                                  std::to_string(prev.aux_offset + prev.size) + " and " +
                                                  std::to_string(stream->buffers[i].aux_offset)));
      }
      auto decoder = etm::EtmDecoder::Create(
          unformatted ? etm::BufferFormat::kSingleSource : etm::BufferFormat::kCoreSightFrames, sources, {});
      if (!decoder) return ReportBadInput(options.path + ": stream " + stream->name + ": " + decoder.error().message);
      for (const etm::MemoryImage& m : memory) (void)(*decoder)->AddMemory(m);
      etm::EtmDecodeStats stats = (*decoder)->Decode(run, sink);
      if (stats.fatal_errors)
        Warn(options.path + ": stream " + stream->name + ": " + std::to_string(stats.fatal_errors) +
             " decoder error(s); decoding resumed after each");
      offset += run.size();
      i = j;
    }
  }
  writer.OnEnd();
  return kExitOk;
}

}  // namespace ptprof::cli
