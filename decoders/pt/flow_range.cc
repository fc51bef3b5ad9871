#include "decoders/pt/flow_range.h"

#include <algorithm>
#include <cstdio>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "decoders/pt/flow_config.h"
#include "decoders/pt/flow_decoder.h"
#include "decoders/pt/flow_events.h"
#include "decoders/pt/fast/fast_flow.h"
#include "decoders/pt/image_cache.h"
#include "decoders/pt/insn_expander.h"

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

namespace {

// Follows the tasks sideband names, for either engine: at each point the decoder asks, which
// task runs (a ContextSwitch event for the model where it changes) and which image of `cache`
// holds its address space's code (made when first needed). Returns that image's index when the
// decoder must switch to it, nullopt to keep the current one. `same` (when `tsc` is known): the
// times around `tsc` at which asking again would switch nothing.
class TaskFollower {
 public:
  // `tasks` is asked through a timeline of this thread's where it keeps state between calls
  // (TaskTimeline::ForThread). `image_of_space`: the images of `cache` made for the address
  // spaces so far (by this decode or an earlier one that borrowed the same cache), added to as
  // spaces are met.
  TaskFollower(TaskTimeline& tasks, PtImageCache& cache, FlowToModel& model,
               std::vector<std::string>& warnings, std::map<size_t, size_t>& image_of_space)
      : own_tasks_(tasks.ForThread()), tasks_(own_tasks_ ? *own_tasks_ : tasks), cache_(cache),
        model_(model), warnings_(warnings), image_of_space_(image_of_space) {}

  // Whether At would switch anything at time `tsc` (nothing changes here).
  bool WouldSwitch(std::optional<uint64_t> tsc, TscSpan* same) {
    return !current_ || !(*current_ == tasks_.TaskAt(tsc, same));
  }

  std::optional<size_t> At(std::optional<uint64_t> tsc, uint64_t offset, TscSpan* same) {
    const RunningTask task = tasks_.TaskAt(tsc, same);
    if (current_ && *current_ == task) return std::nullopt;
    if (!current_ || current_->pid != task.pid || current_->tid != task.tid)
      model_.SwitchTask(task.pid, task.tid, offset, tsc);
    const bool same_space = current_ && current_->space == task.space;
    current_ = task;
    if (same_space) return std::nullopt;
    auto known = image_of_space_.find(task.space);
    if (known == image_of_space_.end()) {
      const size_t index = cache_.AddImage();
      for (const ImageSection* section : tasks_.SpaceSections(task.space)) {
        auto added = cache_.Add(*section, index);
        if (!added && warnings_.size() < 16) warnings_.push_back(added.error().message);
      }
      known = image_of_space_.emplace(task.space, index).first;
    }
    return known->second;
  }

 private:
  std::unique_ptr<TaskTimeline> own_tasks_;
  TaskTimeline& tasks_;
  PtImageCache& cache_;
  FlowToModel& model_;
  std::vector<std::string>& warnings_;
  std::map<size_t, size_t>& image_of_space_;
  std::optional<RunningTask> current_;
};

}  // namespace

bool FastEngineApplies(const FlowRequest& request, std::string* why) {
  if (!request.ticks) return true;
  if (why) *why = "tick events are asked for";
  return false;
}

Result<FastRangeResult> DecodeFlowRangeFast(std::span<const uint8_t> trace,
                                            const ImageSet& images,
                                            const FlowRequest& request, EventSink& sink,
                                            const std::function<void()>& before_finish,
                                            uint64_t trust_end, fast::CodeGraphPool* graphs,
                                            uint64_t offset_base, RunRefWindow run_refs) {
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
  // Runs are referred to only from the lent graph, which outlives this decode, and only without
  // tasks (whose graphs the model's references do not name).
  if (!graphs || request.tasks) run_refs = {};
  // Instructions: each block the engine walks is expanded where it leaves the model.
  // With tasks, each block is read from the image of the address space it ran in.
  std::deque<InsnTimeNote> time_notes;
  std::deque<InsnImageNote> image_notes_kept;
  std::deque<InsnImageNote>* image_notes =
      request.insns && request.tasks ? &image_notes_kept : nullptr;
  std::optional<InsnExpander> expander;
  if (request.insns) {
    expander.emplace(sink, graph->images, time_notes, 0, image_notes);
    run_refs = {};
  }
  FlowToModel model(expander ? static_cast<EventSink&>(*expander) : sink, graph->images,
                    FlowModelOptions{request.cpu, request.pid, request.tid, offset_base,
                                     run_refs, expander ? &time_notes : nullptr, image_notes,
                                     request.mark_runs});
  fast::FastFlowDecoder decoder(config, trace, graph->code);
  // Following the tasks: one image and code graph per address space, kept with the lent graph
  // (warm for the next PSB segment it is lent to).
  std::optional<TaskFollower> follower;
  std::map<size_t, std::unique_ptr<fast::CodeBlocks>>& code_of_image = graph->code_of_image;
  if (request.tasks) {
    follower.emplace(*request.tasks, graph->images, model, result.range.summary.warnings,
                     graph->image_of_space);
    decoder.SetCodeSwitchHook(
        [&](std::optional<uint64_t> tsc, uint64_t offset, TscSpan& same) -> fast::CodeBlocks* {
          const std::optional<size_t> image = follower->At(tsc, offset, &same);
          if (!image) return nullptr;
          model.NoteImageBefore(*image);
          std::unique_ptr<fast::CodeBlocks>& code = code_of_image[*image];
          if (!code) code = std::make_unique<fast::CodeBlocks>(graph->images, *image);
          return code.get();
        },
        [&](std::optional<uint64_t> tsc, TscSpan& same) {
          return follower->WouldSwitch(tsc, &same);
        });
  }
  const fast::FastFlowOutcome outcome = decoder.Run(model, trust_end);
  if (!outcome.handled) {
    pool.Return(std::move(graph));
    result.handled = false;
    char at[32];
    std::snprintf(at, sizeof at, "%#llx", static_cast<unsigned long long>(offset_base + outcome.why_offset));
    result.why = outcome.why + " at offset " + at;
    result.passed = expander ? expander->passed() : model.counts().passed;
    return result;
  }
  model.FlushBlocks();
  if (before_finish) before_finish();
  model.Finish();
  // The expander reads the graph's images until the last block has gone on.
  pool.Return(std::move(graph));
  if (expander && !expander->failure().empty()) {
    result.handled = false;
    result.why = "cannot list the instructions of " + expander->failure();
    result.passed = expander->passed();
    return result;
  }
  result.range.summary.blocks = expander ? 0 : model.counts().blocks;
  result.range.summary.insns = expander ? expander->insns() : model.counts().insns;
  result.range.summary.gaps = model.counts().gaps;
  result.range.summary.has_psb = outcome.synced;
  result.range.synced = outcome.synced;
  return result;
}

Result<FlowRangeResult> DecodeFlowRange(std::span<const uint8_t> trace, const ImageSet& images,
                                        const FlowRequest& request, EventSink& sink,
                                        const std::function<void()>& before_finish,
                                        uint64_t offset_base, fast::CodeGraphPool* pool) {
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
  // libipt's images of the sections, made once per trace when a pool lends them: for a large
  // program that is a large part of decoding a short piece.
  fast::CodeGraphPool own;
  fast::CodeGraphPool& lender = pool ? *pool : own;
  Status added;
  std::unique_ptr<fast::CodeGraphPool::Entry> entry =
      lender.Borrow([&](PtImageCache& fresh) { return fresh.AddAll(images); }, added);
  if (!added) return tl::unexpected(added.error());
  PtImageCache& cache = entry->images;
  FlowToModel model(sink, cache,
                    FlowModelOptions{request.cpu, request.pid, request.tid, offset_base, {}});
  FlowDecoder decoder(config, flow, trace, cache);
  // Following the tasks: one libipt image per address space, made when first needed (kept with
  // the lent images).
  std::optional<TaskFollower> follower;
  if (request.tasks) {
    follower.emplace(*request.tasks, cache, model, summary.warnings, entry->image_of_space);
    decoder.SetImageSwitchHook([&](std::optional<uint64_t> tsc, uint64_t offset) -> pt_image* {
      const std::optional<size_t> image = follower->At(tsc, offset, nullptr);
      return image ? cache.image(*image) : nullptr;
    });
  }
  if (auto st = decoder.Run(model); !st) return tl::unexpected(st.error());
  model.FlushBlocks();
  if (before_finish) before_finish();
  model.Finish();
  lender.Return(std::move(entry));
  summary.blocks = model.counts().blocks;
  summary.insns = model.counts().insns;
  summary.gaps = model.counts().gaps;
  summary.has_psb = decoder.synced();
  return FlowRangeResult{std::move(summary), decoder.synced()};
}

}  // namespace ptprof::pt
