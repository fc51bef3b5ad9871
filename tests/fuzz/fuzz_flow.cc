// Fuzz target: the flow path. Any byte string is decoded as PT against the sample program's code
// (traces/sample/sample, embedded at build time as a raw image at its link address), blocks and
// instructions, with both engines, into model events: no crash, no hang, whatever the input. And
// the fast engine's blocks equal libipt's block decoder's, field for field; its instructions (its
// blocks expanded) equal libipt's instruction decoder's wherever libipt's two decoders agree with
// each other (the same other events, as many instructions): on damaged traces they sometimes do
// not (a disable at a conditional branch is an event to one, a desync to the other), and the
// expansion follows the block decoder's reading. The fast engine's block decode marks its TNT
// runs in the batches (FlowRequest::mark_runs): every run must lie in its batch and bring the
// same blocks each time it comes, as a consumer that works a run out once relies on. Otherwise
// the target aborts, naming the first difference.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "decoders/pt/flow_session.h"
#include "src/model/event_equality.h"
#include "sideband/image_set.h"

#ifndef PTPROF_FUZZ_IMAGE
#error "PTPROF_FUZZ_IMAGE must name the ELF file the fuzzed traces run over"
#endif

namespace {

class CollectSink : public ptprof::EventSink {
 public:
  void OnEvent(const ptprof::TraceEvent& event) override { events.push_back(event); }
  void OnBlocks(const ptprof::BlockBatch& batch) override {
    for (const ptprof::BatchRun& run : batch.runs) CheckRun(batch, run);
    EventSink::OnBlocks(batch);
  }
  std::vector<ptprof::TraceEvent> events;

 private:
  // What a run's blocks are, as first seen.
  using Blocks = std::vector<std::tuple<uint64_t, uint32_t, uint32_t, uint8_t>>;
  void CheckRun(const ptprof::BlockBatch& batch, const ptprof::BatchRun& run) {
    const ptprof::PackedEvent* begin = batch.blocks.data();
    if (batch.run_source == 0 || run.count == 0 || run.at < begin ||
        run.at + run.count > begin + batch.blocks.size()) {
      std::fprintf(stderr, "fuzz_flow: a run of %u blocks does not lie in its batch\n", run.count);
      std::abort();
    }
    Blocks blocks;
    for (uint32_t i = 0; i < run.count; ++i)
      blocks.emplace_back(run.at[i].first_ip_or_index, run.at[i].insns, run.at[i].span,
                          run.at[i].mode);
    auto [seen, first] = runs_.try_emplace({batch.run_source, run.run, run.count}, blocks);
    if (!first && seen->second != blocks) {
      std::fprintf(stderr, "fuzz_flow: a run of %u blocks came back with other blocks\n",
                   run.count);
      std::abort();
    }
  }
  std::map<std::tuple<uint64_t, const void*, uint32_t>, Blocks> runs_;
};

const ptprof::ImageSet& Images() {
  static ptprof::ImageSet* images = [] {
    auto* set = new ptprof::ImageSet;
    ptprof::ElfImageSpec spec;
    spec.file = PTPROF_FUZZ_IMAGE;
    if (auto s = set->AddElf(spec); !s) {
      std::fprintf(stderr, "fuzz_flow: %s\n", s.error().message.c_str());
      std::abort();
    }
    return set;
  }();
  return *images;
}


using Events = std::vector<ptprof::TraceEvent>;

Events Decode(const std::vector<uint8_t>& trace, bool insns, ptprof::pt::FlowEngine engine) {
  ptprof::pt::FlowRequest request;
  request.insns = insns;
  request.engine = engine;
  request.mark_runs = true;
  CollectSink sink;
  if (!ptprof::pt::DecodeFlow(trace, Images(), request, sink)) sink.events.clear();
  return sink.events;
}

// The index of the first event that differs (SIZE_MAX: none).
size_t FirstDifference(const Events& a, const Events& b) {
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i)
    if (!ptprof::SameEvent(a[i], b[i])) return i;
  return a.size() == b.size() ? SIZE_MAX : std::min(a.size(), b.size());
}

// Whether libipt's block and instruction decodes agree: the same events besides blocks and
// instructions, and as many instructions.
bool LibiptAgrees(const Events& blocks, const Events& insns) {
  Events others_b, others_i;
  uint64_t count_b = 0, count_i = 0;
  for (const ptprof::TraceEvent& e : blocks) {
    if (const auto* b = std::get_if<ptprof::ExecBlock>(&e.body)) count_b += b->insns;
    else others_b.push_back(e);
  }
  for (const ptprof::TraceEvent& e : insns) {
    if (std::holds_alternative<ptprof::Instruction>(e.body)) ++count_i;
    else others_i.push_back(e);
  }
  return count_b == count_i && FirstDifference(others_b, others_i) == SIZE_MAX;
}

void RequireSame(const Events& libipt, const Events& fast, const char* what) {
  const size_t differ = FirstDifference(libipt, fast);
  if (differ == SIZE_MAX) return;
  std::fprintf(stderr,
               "fuzz_flow: the engines differ (%s): %zu events from libipt, %zu from the fast "
               "engine, first difference at event %zu\n",
               what, libipt.size(), fast.size(), differ);
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using ptprof::pt::FlowEngine;
  std::vector<uint8_t> trace(data, data + size);
  const Events blocks = Decode(trace, false, FlowEngine::kLibipt);
  RequireSame(blocks, Decode(trace, false, FlowEngine::kFast), "blocks");
  const Events insns = Decode(trace, true, FlowEngine::kLibipt);
  const Events fast_insns = Decode(trace, true, FlowEngine::kFast);
  if (LibiptAgrees(blocks, insns)) RequireSame(insns, fast_insns, "instructions");
  return 0;
}
