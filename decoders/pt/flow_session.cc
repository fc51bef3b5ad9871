#include "decoders/pt/flow_session.h"

#include <algorithm>

#include "decoders/pt/flow_config.h"
#include "decoders/pt/flow_decoder.h"
#include "decoders/pt/flow_events.h"
#include "decoders/pt/image_cache.h"

namespace ptprof::pt {

namespace {

// A PSB may sit in a trace that holds nothing to decode after it (the decoder then reports the
// end of the stream instead of a sync): look for the packet's bytes themselves.
bool HasPsb(const std::vector<uint8_t>& trace) {
  static const uint8_t kPsb[] = {0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82,
                                 0x02, 0x82, 0x02, 0x82, 0x02, 0x82, 0x02, 0x82};
  return std::search(trace.begin(), trace.end(), std::begin(kPsb), std::end(kPsb)) != trace.end();
}

}  // namespace

Result<FlowSummary> DecodeFlow(const std::vector<uint8_t>& trace, const ImageSet& images,
                               const FlowRequest& request, EventSink& sink) {
  if (trace.empty()) return Fail("offset 0x0: the trace is empty");
  FlowOptions flow;
  flow.insn_decoder = request.insns;
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
  FlowToModel model(sink, cache, FlowModelOptions{request.cpu});
  FlowDecoder decoder(config, flow, trace, cache);
  if (auto st = decoder.Run(model); !st) return tl::unexpected(st.error());
  model.Finish();
  sink.OnEnd();
  summary.blocks = model.counts().blocks;
  summary.insns = model.counts().insns;
  summary.gaps = model.counts().gaps;
  summary.has_psb = decoder.synced() || HasPsb(trace);
  return summary;
}

}  // namespace ptprof::pt
