#include "decoders/pt/flow_session.h"

#include "decoders/pt/flow_config.h"
#include "decoders/pt/flow_decoder.h"
#include "decoders/pt/flow_events.h"
#include "decoders/pt/image_cache.h"

namespace ptprof::pt {

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
  summary.synced = decoder.synced();
  return summary;
}

}  // namespace ptprof::pt
