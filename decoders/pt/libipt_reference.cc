#include "decoders/pt/libipt_reference.h"

#include <intel-pt.h>

#include "decoders/pt/flow_config.h"
#include "decoders/pt/image_cache.h"

namespace ptprof::pt {

namespace {

// The decode loop is the same for both decoders; only the libipt entry points differ.
template <class Decoder, class Unit>
struct Api {
  int (*sync_forward)(Decoder*);
  int (*event)(Decoder*, pt_event*, size_t);
  int (*next)(Decoder*, Unit*, size_t);
};

template <class Decoder, class Unit, class CountUnit>
void DecodeAll(Decoder* decoder, const Api<Decoder, Unit>& api, ReferenceCount& count,
               CountUnit count_unit) {
  for (;;) {
    int status = api.sync_forward(decoder);
    if (status < 0) return;  // -pte_eos: no further PSB
    for (;;) {
      while (status >= 0 && (status & pts_event_pending)) {
        pt_event event;
        status = api.event(decoder, &event, sizeof event);
        if (status >= 0) ++count.events;
      }
      if (status < 0) break;
      Unit unit;
      status = api.next(decoder, &unit, sizeof unit);
      count_unit(unit, status);
      if (status < 0) break;
    }
    if (status == -pte_eos) return;
    ++count.errors;
  }
}

}  // namespace

Result<ReferenceCount> RunLibiptDirectly(std::span<const uint8_t> trace, const ImageSet& images,
                                         const PtParams& params, bool insn_decoder) {
  if (trace.empty()) return Fail("offset 0x0: the trace is empty");
  PtImageCache cache;
  if (auto st = cache.AddAll(images); !st) return tl::unexpected(st.error());
  return RunLibiptDirectly(trace, cache, params, insn_decoder);
}

Result<ReferenceCount> RunLibiptDirectly(std::span<const uint8_t> trace, PtImageCache& cache,
                                         const PtParams& params, bool insn_decoder) {
  if (trace.empty()) return Fail("offset 0x0: the trace is empty");
  FlowOptions flow;
  flow.insn_decoder = insn_decoder;
  pt_config config;
  int errata_status = 0;
  if (auto st = FillPtConfig(params, flow, config, errata_status); !st) return tl::unexpected(st.error());
  config.begin = const_cast<uint8_t*>(trace.data());
  config.end = const_cast<uint8_t*>(trace.data()) + trace.size();
  ReferenceCount count;
  if (insn_decoder) {
    pt_insn_decoder* decoder = pt_insn_alloc_decoder(&config);
    if (!decoder) return Fail("libipt refused the configuration");
    pt_insn_set_image(decoder, cache.image());
    Api<pt_insn_decoder, pt_insn> api{pt_insn_sync_forward, pt_insn_event, pt_insn_next};
    DecodeAll(decoder, api, count, [&](const pt_insn&, int status) {
      if (status >= 0) ++count.insns;
    });
    pt_insn_free_decoder(decoder);
  } else {
    pt_block_decoder* decoder = pt_blk_alloc_decoder(&config);
    if (!decoder) return Fail("libipt refused the configuration");
    pt_blk_set_image(decoder, cache.image());
    Api<pt_block_decoder, pt_block> api{pt_blk_sync_forward, pt_blk_event, pt_blk_next};
    DecodeAll(decoder, api, count, [&](const pt_block& block, int) {
      // A block cut short by an error still reports the instructions it holds.
      count.insns += block.ninsn;
      if (block.ninsn) ++count.blocks;
    });
    pt_blk_free_decoder(decoder);
  }
  return count;
}

}  // namespace ptprof::pt
