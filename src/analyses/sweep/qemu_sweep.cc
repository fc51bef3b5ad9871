// The emulated backend of RunSweep: one run under QEMU with the plugin's stream kept, then one
// encoding, packet census and decode per grid point.
#include <cstdio>
#include <map>
#include <memory>

#include "decoders/pt/flow_session.h"
#include "decoders/pt/trace_census.h"
#include "sideband/file_bytes.h"
#include "sideband/image_set.h"
#include "src/analyses/sweep/sweep_runner.h"
#include "src/record/qemu_recorder.h"
#include "src/record/qemu_stream.h"

namespace ptprof::sweep {

namespace {

pt::EncoderOptions EncoderOptionsOf(const PacketConfig& config) {
  pt::EncoderOptions enc;  // as `ptprof record --backend qemu` sets it (src/cli/cmd_record.cc)
  enc.psb_period = config.psb_period;
  enc.emit_tsc = config.tsc;
  enc.emit_timing = config.tsc;
  enc.emit_mtc = config.mtc_period.has_value() && config.tsc;
  if (config.mtc_period) enc.mtc_freq = *config.mtc_period;
  enc.emit_cyc = config.cyc_threshold.has_value();
  if (config.cyc_threshold) enc.cyc_threshold = *config.cyc_threshold;
  enc.tsc_per_ctc = 2;
  return enc;
}

// The decoder's view of the configuration (the archive's manifest.pt of such a recording).
pt::PtParams DecodeParamsOf(const PacketConfig& config) {
  pt::PtParams params;
  params.nom_freq = 20;
  if (config.mtc_period) {
    params.mtc_freq = *config.mtc_period;
    params.cpuid_0x15_eax = 1;
    params.cpuid_0x15_ebx = 2;
  }
  return params;
}

Status WriteBytes(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::fopen(path.c_str(), "wb"), std::fclose);
  if (!file) return Fail(path + ": cannot create");
  if (!bytes.empty() && std::fwrite(bytes.data(), 1, bytes.size(), file.get()) != bytes.size())
    return Fail(path + ": write failed");
  return {};
}

// The code the workload executed, as one file of regions and an image set reading it.
Result<ImageSet> CodeImages(const std::vector<record::CodeRegion>& code, const std::string& path) {
  std::vector<uint8_t> all;
  std::vector<RawImageSpec> specs;
  for (const record::CodeRegion& region : code) {
    specs.push_back({path, all.size(), region.bytes.size(), region.address});
    all.insert(all.end(), region.bytes.begin(), region.bytes.end());
  }
  if (auto st = WriteBytes(path, all); !st) return tl::unexpected(st.error());
  ImageSet images;
  for (const RawImageSpec& spec : specs)
    if (auto st = images.AddRaw(spec); !st) return tl::unexpected(st.error());
  return images;
}

// One grid point: encode, count, decode.
SweepRow MeasurePoint(const Workload& workload, const SweepRequest& request,
                      const GridPoint& point, const record::QemuStream& stream,
                      const ImageSet& images, const std::string& work_dir) {
  SweepRow row;
  row.workload = workload.name;
  row.backend = request.backend;
  row.axis = point.axis;
  row.config = point.config;
  row.seconds_emulated = true;
  record::QemuFlowOptions flow;
  flow.encoder = EncoderOptionsOf(point.config);
  flow.cycles_per_insn = request.cycles_per_insn;
  auto encoded = record::EncodeQemuStream(stream, flow);
  if (!encoded) {
    row.error = "encoding: " + encoded.error().message;
    return row;
  }
  const pt::PtParams params = DecodeParamsOf(point.config);
  TimeResolution resolution(kEmulatedNsPerTick);
  uint64_t ticks = 0;
  for (const record::QemuThreadTrace& thread : encoded->threads) {
    row.trace_bytes += thread.pt.size();
    row.insns += thread.insns;
    ticks += thread.tsc_end - thread.tsc_begin;
    if (!request.trace_dir.empty()) {
      std::string path = work_dir + "/" + workload.name + "." + point.config.Label() + ".tid" +
                         std::to_string(thread.tid) + ".pt";
      if (auto st = WriteBytes(path, thread.pt); !st) {
        row.error = st.error().message;
        return row;
      }
      row.trace_files.push_back(path);
    }
    if (thread.pt.empty()) continue;
    auto census = pt::TakeCensus(thread.pt, params);
    if (!census) {
      row.error = "packet census of thread " + std::to_string(thread.tid) + ": " +
                  census.error().message;
      return row;
    }
    if (!census->errors.empty()) {
      row.error = "packet census of thread " + std::to_string(thread.tid) + ": offset " +
                  std::to_string(census->errors[0].offset) + ": " + census->errors[0].message;
      return row;
    }
    for (const auto& [kind, count] : census->packets_by_kind) row.packets[kind] += count;
    row.has_packets = true;
    pt::FlowRequest flow_request;
    flow_request.params = params;
    flow_request.tid = static_cast<int32_t>(thread.tid);
    resolution.StartStream();
    auto decoded = pt::DecodeFlow(thread.pt, images, flow_request, resolution);
    if (!decoded) {
      row.error = "decoding thread " + std::to_string(thread.tid) + ": " + decoded.error().message;
      return row;
    }
    if (decoded->gaps != 0) {
      row.error = "decoding thread " + std::to_string(thread.tid) + ": " +
                  std::to_string(decoded->gaps) + " gap(s) in the decoded flow";
      return row;
    }
  }
  row.traced_seconds = static_cast<double>(ticks) * kEmulatedNsPerTick * 1e-9;
  row.resolution = resolution.Summary();
  row.has_resolution = true;
  row.ok = true;
  return row;
}

}  // namespace

std::vector<SweepRow> RunQemuWorkload(const Workload& workload, const SweepRequest& request,
                                      const std::string& work_dir) {
  record::QemuRecordOptions options;
  options.argv = {workload.binary};
  options.stream_path = work_dir + "/" + workload.name + ".qemu-stream";
  options.punch_consumed = false;
  options.quiet_child = true;
  options.flow.cycles_per_insn = request.cycles_per_insn;
  auto recording = record::RecordWithQemu(options);
  auto stream_bytes = ReadFileBytes(options.stream_path);
  std::remove(options.stream_path.c_str());
  if (!recording) return FailedRows(workload, request, "recording: " + recording.error().message);
  if (recording->signal != 0)
    return FailedRows(workload, request,
                      workload.binary + " was killed by signal " + std::to_string(recording->signal));
  if (recording->exit_status != 0)
    return FailedRows(workload, request,
                      workload.binary + " exited with status " +
                          std::to_string(recording->exit_status));
  if (!recording->complete)
    return FailedRows(workload, request, "recording incomplete: " + recording->note);
  if (!stream_bytes)
    return FailedRows(workload, request, "the kept stream: " + stream_bytes.error().message);
  auto stream = record::ParseQemuStream(*stream_bytes, options.stream_path);
  stream_bytes->clear();
  stream_bytes->shrink_to_fit();
  if (!stream) return FailedRows(workload, request, stream.error().message);
  const std::string code_path = work_dir + "/" + workload.name + ".code.bin";
  auto images = CodeImages(recording->code, code_path);
  if (!images) return FailedRows(workload, request, images.error().message);
  std::vector<SweepRow> rows;
  for (const GridPoint& point : request.grid) {
    if (request.progress) request.progress("sweep: " + workload.name + " " + point.config.Label());
    rows.push_back(MeasurePoint(workload, request, point, *stream, *images, work_dir));
  }
  if (request.trace_dir.empty()) std::remove(code_path.c_str());
  return rows;
}

}  // namespace ptprof::sweep
