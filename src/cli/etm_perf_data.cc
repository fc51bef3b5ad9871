#include "src/cli/etm_perf_data.h"

#include <cinttypes>
#include <cstdio>
#include <set>

#include <nlohmann/json.hpp>

#include "decoders/etm/arm_disassembler.h"
#include "decoders/etm/insn_expansion.h"
#include "decoders/etm/etm_decoder.h"
#include "decoders/etm/perf_etm_config.h"
#include "decoders/etm/range_expander.h"
#include "sideband/file_bytes.h"
#include "sideband/perf/perf_data.h"
#include "src/cli/command.h"
#include "src/model/unended_sink.h"
#include "src/pipeline/session_perf_data.h"
#include "src/report/event_writer.h"

namespace ptprof::cli {

namespace {

constexpr uint64_t kCsEtmUnformatted = 0x100;  // PERF_AUX_FLAG_CORESIGHT_FORMAT_RAW

void Warn(const std::string& message) { std::fprintf(stderr, "ptprof: warning: %s\n", message.c_str()); }

// The code of every executable mapping whose binary is found, each binary reported once when not.
std::vector<etm::MemoryImage> LoadMappings(const perf::PerfData& data, const PerfEtmCommandOptions& o,
                                           std::vector<RawImageSpec>& files) {
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
    files.push_back(RawImageSpec{file, mmap->pgoff, bytes->size(), mmap->addr});
    char where[64];
    std::snprintf(where, sizeof where, " (mmap at 0x%" PRIx64 ")", mmap->addr);
    images.push_back(etm::MemoryImage{mmap->addr, "",
                                      std::make_shared<const std::vector<uint8_t>>(std::move(*bytes)),
                                      file + where});
  }
  return images;
}

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

std::optional<tl::expected<std::unique_ptr<PerfEtmInput>, int>> OpenPerfEtmInput(
    const PerfEtmCommandOptions& options, bool load_code) {
  auto bytes = ReadFileBytes(options.path);
  if (!bytes) return std::nullopt;
  auto data = perf::ParsePerfData(std::move(*bytes), options.path);
  if (!data || !data->cs_etm) return std::nullopt;
  auto input = std::make_unique<PerfEtmInput>();
  input->data = std::move(*data);
  const perf::PerfData& d = input->data;

  for (const perf::CsEtmCpu& cpu : d.cs_etm->cpus) {
    auto cfg = etm::SourceConfigFromPerf(perf::CsEtmKindName(cpu.kind), static_cast<int>(cpu.cpu), cpu.params);
    if (!cfg) {
      Warn(options.path + ": AUXTRACE_INFO: " + cfg.error().message);
      continue;
    }
    input->configs.push_back(std::move(*cfg));
  }
  if (input->configs.empty())
    return tl::unexpected(ReportBadInput(options.path + ": AUXTRACE_INFO: no CPU with an ETMv4 or ETE configuration"));

  for (const perf::AuxStream& s : d.aux_streams) {
    if (options.streams.empty()) {
      input->streams.push_back(&s);
      continue;
    }
    for (const std::string& name : options.streams)
      if (s.name == name) input->streams.push_back(&s);
  }
  if (!options.streams.empty() && input->streams.size() != options.streams.size()) {
    std::string names;
    for (const perf::AuxStream& s : d.aux_streams) names += (names.empty() ? "" : ", ") + s.name;
    return tl::unexpected(
        ReportBadInput(options.path + ": no such stream (there are: " + (names.empty() ? "none" : names) + ")"));
  }
  if (load_code) input->memory = LoadMappings(d, options, input->code_files);
  input->unformatted = (d.aux_pmu_flags & kCsEtmUnformatted) != 0;
  return input;
}

int ForEachPerfEtmRun(const PerfEtmInput& input, const perf::AuxStream& stream, const std::string& where,
                      const PerfEtmRun& run, bool packets_only) {
  const perf::PerfData& data = input.data;
  std::vector<etm::SourceConfig> sources;
  if (input.unformatted) {
    // Raw trace carries one trace unit's packets without IDs: the stream's own CPU.
    for (const etm::SourceConfig& c : input.configs)
      if (stream.cpu && c.cpu == static_cast<int>(*stream.cpu)) sources.push_back(c);
    if (sources.empty()) {
      Warn(where + ": stream " + stream.name +
           ": unformatted trace needs the configuration of its CPU, which AUXTRACE_INFO lacks");
      return kExitOk;
    }
  } else {
    sources = input.configs;
  }
  etm::EtmDecodeOptions decode_options;
  decode_options.packets_only = packets_only;
  // Each run of contiguous AUX buffers is decoded on its own; a hole between runs is a gap.
  uint64_t offset = 0;
  size_t i = 0;
  while (i < stream.buffers.size()) {
    size_t j = i + 1;
    while (j < stream.buffers.size() &&
           stream.buffers[j].aux_offset == stream.buffers[j - 1].aux_offset + stream.buffers[j - 1].size)
      ++j;
    std::vector<uint8_t> bytes;
    for (size_t k = i; k < j; ++k) {
      const perf::AuxBuffer& b = stream.buffers[k];
      if (b.data_offset + b.size <= data.bytes.size())
        bytes.insert(bytes.end(), data.bytes.begin() + static_cast<ptrdiff_t>(b.data_offset),
                     data.bytes.begin() + static_cast<ptrdiff_t>(b.data_offset + b.size));
    }
    std::string missing;
    if (i > 0) {
      const perf::AuxBuffer& prev = stream.buffers[i - 1];
      missing = "AUX data missing between AUX offsets " + std::to_string(prev.aux_offset + prev.size) + " and " +
                std::to_string(stream.buffers[i].aux_offset);
    }
    auto decoder = etm::EtmDecoder::Create(
        input.unformatted ? etm::BufferFormat::kSingleSource : etm::BufferFormat::kCoreSightFrames, sources,
        decode_options);
    if (!decoder) return ReportBadInput(where + ": stream " + stream.name + ": " + decoder.error().message);
    for (const etm::MemoryImage& m : input.memory) (void)(*decoder)->AddMemory(m);
    run(**decoder, bytes, offset, missing);
    offset += bytes.size();
    i = j;
  }
  return kExitOk;
}

std::optional<int> RunPerfEtmDecode(const PerfEtmCommandOptions& options) {
  auto opened = OpenPerfEtmInput(options, true);
  if (!opened) return std::nullopt;
  if (!*opened) return opened->error();
  const PerfEtmInput& input = ***opened;
  const perf::PerfData& data = input.data;

  EventWriterOptions writer_options;
  writer_options.format = options.format == "jsonl" ? EventFormat::kJsonl : EventFormat::kText;
  writer_options.show_cpu = input.streams.size() > 1;
  writer_options.disassemble = etm::ArmDisassembler::FormatOnThisThread;
  EventWriter writer(stdout, writer_options);
  etm::RangeExpander expander(input.memory);
  etm::InsnExpansion expansion(expander, writer);
  // Several AUX runs go to one writer, which takes them in parts (not the instruction listing).
  UnendedSink sink(options.insn ? static_cast<EventSink&>(expansion) : writer);

  uint64_t aux_written = 0;
  for (const perf::AuxNotice& n : data.aux_notices) aux_written += n.aux.aux_size;
  if (data.aux_streams.empty() && aux_written > 0) {
    // The kernel wrote trace that the file does not hold: say so in the flow and on stderr.
    std::string detail = "the kernel wrote " + std::to_string(aux_written) + " bytes of AUX data (" +
                         std::to_string(data.aux_notices.size()) +
                         " PERF_RECORD_AUX) but the file holds no AUXTRACE data";
    sink.OnEvent(MissingData(0, kUnknownId, detail));
    Warn(options.path + ": " + detail);
  }
  for (const perf::AuxStream* stream : input.streams) {
    const int32_t cpu = stream->cpu ? static_cast<int32_t>(*stream->cpu) : kUnknownId;
    int status = ForEachPerfEtmRun(input, *stream, options.path,
                                   [&](etm::EtmDecoder& decoder, const std::vector<uint8_t>& bytes,
                                       uint64_t offset, const std::string& missing) {
      if (!missing.empty()) sink.OnEvent(MissingData(offset, cpu, missing));
      etm::EtmDecodeStats stats = decoder.Decode(bytes, sink);
      if (stats.fatal_errors)
        Warn(options.path + ": stream " + stream->name + ": " + std::to_string(stats.fatal_errors) +
             " decoder error(s); decoding resumed after each");
      if (options.verbose)
        std::fprintf(stderr, "ptprof: %s: stream %s: %s\n", options.path.c_str(),
                     stream->name.c_str(), etm::HowDecoded(stats).c_str());
    });
    if (status != kExitOk) return status;
  }
  writer.OnEnd();
  return kExitOk;
}

std::optional<int> RunPerfEtmDump(const PerfEtmCommandOptions& options) {
  auto opened = OpenPerfEtmInput(options, false);  // packets need no code
  if (!opened) return std::nullopt;
  if (!*opened) return opened->error();
  const PerfEtmInput& input = ***opened;
  const bool jsonl = options.format == "jsonl";
  std::string pending;
  auto flush = [&pending] {
    std::fwrite(pending.data(), 1, pending.size(), stdout);
    pending.clear();
  };
  for (const perf::AuxStream* stream : input.streams) {
    if (!jsonl) pending += "# stream " + stream->name + " (" + std::to_string(stream->bytes) + " bytes)\n";
    uint64_t errors = 0;
    int status = ForEachPerfEtmRun(input, *stream, options.path,
                                   [&](etm::EtmDecoder& decoder, const std::vector<uint8_t>& bytes,
                                       uint64_t offset, const std::string& missing) {
      if (!missing.empty()) {
        if (jsonl)
          pending += nlohmann::ordered_json({{"stream", stream->name}, {"offset", offset}, {"gap", missing}}).dump() + "\n";
        else
          pending += "# offset " + std::to_string(offset) + ": " + missing + "\n";
      }
      // Idx in the lines counts from the start of the run (as perf report -D counts from its buffer).
      etm::EtmDecodeStats stats = decoder.ListPackets(bytes, [&](const std::string& line) {
        if (jsonl)
          pending += nlohmann::ordered_json({{"stream", stream->name}, {"offset", offset}, {"packet", line}}).dump();
        else
          pending += line;
        pending += '\n';
        if (pending.size() >= (1u << 16)) flush();
      });
      errors += stats.fatal_errors;
    }, true);
    flush();
    std::fflush(stdout);
    if (status != kExitOk) return status;
    if (errors)
      Warn(options.path + ": stream " + stream->name + ": " + std::to_string(errors) +
           " decoder error(s); listing resumed after each");
  }
  return kExitOk;
}

}  // namespace ptprof::cli
