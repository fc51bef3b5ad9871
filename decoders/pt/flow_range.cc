#include "decoders/pt/flow_range.h"

#include <algorithm>
#include <cstdio>
#include <map>

#include "decoders/pt/flow_config.h"
#include "decoders/pt/flow_decoder.h"
#include "decoders/pt/flow_events.h"
#include "decoders/pt/fast/fast_flow.h"
#include "decoders/pt/image_cache.h"

namespace ptprof::pt {

bool HasPsb(std::span<const uint8_t> trace) {
  static const uint8_t kPsb[] = {0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
                                 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82};
  return std::search(trace.begin(), trace.end(), std::begin(kPsb), std::end(kPsb)) != trace.end();
}

std::optional<uint64_t> TruncatedPacketAt(std::span<const uint8_t> trace) {
  pt_config config;
  pt_config_init(&config);
  config.begin = const_cast<uint8_t*>(trace.data());
  config.end = config.begin + trace.size();
  pt_packet_decoder* decoder = pt_pkt_alloc_decoder(&config);
  if (!decoder) return std::nullopt;
  std::optional<uint64_t> truncated;
  // Packets before the last PSB were read by the flow decoder: start there.
  if (pt_pkt_sync_backward(decoder) >= 0) {
    for (;;) {
      uint64_t offset = 0;
      pt_pkt_get_offset(decoder, &offset);
      pt_packet packet;
      int status = pt_pkt_next(decoder, &packet, sizeof packet);
      if (status >= 0) continue;
      if (status == -pte_eos && offset < trace.size()) truncated = offset;
      break;  // other damage was reported by the flow decoder
    }
  }
  pt_pkt_free_decoder(decoder);
  return truncated;
}

TraceEvent TruncationGap(uint64_t offset, int32_t cpu) {
  TraceGap gap;
  gap.reason = GapReason::kTruncated;
  gap.code = -pte_eos;
  gap.detail = "the trace ends in the middle of a packet";
  TraceEvent event{EventHeader{}, gap};
  event.header.offset = offset;
  event.header.cpu = cpu;
  return event;
}

bool FastEngineApplies(const FlowRequest& request, std::string* why) {
  const char* reason = request.insns   ? "instructions are asked for (--insn)"
                       : request.ticks ? "tick events are asked for"
                                       : nullptr;
  if (reason && why) *why = reason;
  return reason == nullptr;
}

Result<FastRangeResult> DecodeFlowRangeFast(const std::vector<uint8_t>& trace,
                                            const ImageSet& images,
                                            const FlowRequest& request, EventSink& sink,
                                            const std::function<void()>& before_finish,
                                            uint64_t trust_end, fast::CodeGraphPool* graphs) {
  if (trace.empty()) return Fail("offset 0x0: the trace is empty");
  FlowOptions flow;
  flow.end_on_call = true;
  flow.end_on_jump = true;
  pt_config config;
  int errata_status = 0;
  if (auto st = FillPtConfig(request.params, flow, config, errata_status); !st)
    return tl::unexpected(st.error());
  FastRangeResult result;
  if (errata_status < 0)
    result.range.summary.warnings.push_back(std::string("no errata workarounds for this cpu: ") +
                                            pt_errstr(pt_errcode(errata_status)));
  fast::CodeGraphPool own;
  fast::CodeGraphPool& pool = graphs ? *graphs : own;
  Status added;
  std::unique_ptr<fast::CodeGraphPool::Entry> graph =
      pool.Borrow([&](PtImageCache& cache) { return cache.AddAll(images); }, added);
  if (!added) return tl::unexpected(added.error());
  FlowToModel model(sink, graph->images, FlowModelOptions{request.cpu, request.pid, request.tid});
  fast::FastFlowDecoder decoder(config, trace, graph->code);
  // Following the tasks, as DecodeFlowRange does: one image and code graph per address space.
  PtImageCache& cache = graph->images;
  std::map<size_t, size_t> image_of_space;
  std::map<size_t, std::unique_ptr<fast::CodeBlocks>> code_of_image;
  std::optional<RunningTask> current;
  if (request.tasks) {
    decoder.SetCodeSwitchHook(
        [&](std::optional<uint64_t> tsc, uint64_t offset) -> fast::CodeBlocks* {
          const RunningTask task = request.tasks->TaskAt(tsc);
          if (current && *current == task) return nullptr;
          if (!current || current->pid != task.pid || current->tid != task.tid)
            model.SwitchTask(task.pid, task.tid, offset, tsc);
          const bool same_space = current && current->space == task.space;
          current = task;
          if (same_space) return nullptr;
          auto known = image_of_space.find(task.space);
          if (known == image_of_space.end()) {
            const size_t index = cache.AddImage();
            for (const ImageSection* section : request.tasks->SpaceSections(task.space)) {
              auto added_section = cache.Add(*section, index);
              if (!added_section && result.range.summary.warnings.size() < 16)
                result.range.summary.warnings.push_back(added_section.error().message);
            }
            known = image_of_space.emplace(task.space, index).first;
            code_of_image[index] = std::make_unique<fast::CodeBlocks>(cache, index);
          }
          return code_of_image[known->second].get();
        });
  }
  const fast::FastFlowOutcome outcome = decoder.Run(model, trust_end);
  pool.Return(std::move(graph));
  if (!outcome.handled) {
    result.handled = false;
    char at[32];
    std::snprintf(at, sizeof at, "%#llx", static_cast<unsigned long long>(outcome.why_offset));
    result.why = outcome.why + " at offset " + at;
    return result;
  }
  if (before_finish) before_finish();
  model.Finish();
  result.range.summary.blocks = model.counts().blocks;
  result.range.summary.insns = model.counts().insns;
  result.range.summary.gaps = model.counts().gaps;
  result.range.summary.has_psb = outcome.synced;
  result.range.synced = outcome.synced;
  return result;
}

Result<FlowRangeResult> DecodeFlowRange(const std::vector<uint8_t>& trace, const ImageSet& images,
                                        const FlowRequest& request, EventSink& sink,
                                        const std::function<void()>& before_finish) {
  if (trace.empty()) return Fail("offset 0x0: the trace is empty");
  FlowOptions flow;
  flow.insn_decoder = request.insns;
  flow.tick_events = request.ticks;
  // Ending blocks at every call and jump keeps each block one contiguous run of instructions,
  // which is what the model's ExecBlock promises.
  flow.end_on_call = true;
  flow.end_on_jump = true;
  pt_config config;
  int errata_status = 0;
  if (auto st = FillPtConfig(request.params, flow, config, errata_status); !st)
    return tl::unexpected(st.error());
  FlowSummary summary;
  if (errata_status < 0)
    summary.warnings.push_back(std::string("no errata workarounds for this cpu: ") +
                               pt_errstr(pt_errcode(errata_status)));
  PtImageCache cache;
  if (auto st = cache.AddAll(images); !st) return tl::unexpected(st.error());
  FlowToModel model(sink, cache, FlowModelOptions{request.cpu, request.pid, request.tid});
  FlowDecoder decoder(config, flow, trace, cache);
  // Following the tasks: one libipt image per address space, made when first needed.
  std::map<size_t, size_t> image_of_space;
  std::optional<RunningTask> current;
  if (request.tasks) {
    decoder.SetImageSwitchHook([&](std::optional<uint64_t> tsc, uint64_t offset) -> pt_image* {
      const RunningTask task = request.tasks->TaskAt(tsc);
      if (current && *current == task) return nullptr;
      if (!current || current->pid != task.pid || current->tid != task.tid)
        model.SwitchTask(task.pid, task.tid, offset, tsc);
      const bool same_space = current && current->space == task.space;
      current = task;
      if (same_space) return nullptr;
      auto known = image_of_space.find(task.space);
      if (known == image_of_space.end()) {
        const size_t index = cache.AddImage();
        for (const ImageSection* section : request.tasks->SpaceSections(task.space)) {
          auto added = cache.Add(*section, index);
          if (!added && summary.warnings.size() < 16) summary.warnings.push_back(added.error().message);
        }
        known = image_of_space.emplace(task.space, index).first;
      }
      return cache.image(known->second);
    });
  }
  if (auto st = decoder.Run(model); !st) return tl::unexpected(st.error());
  if (before_finish) before_finish();
  model.Finish();
  summary.blocks = model.counts().blocks;
  summary.insns = model.counts().insns;
  summary.gaps = model.counts().gaps;
  summary.has_psb = decoder.synced();
  return FlowRangeResult{std::move(summary), decoder.synced()};
}

}  // namespace ptprof::pt
