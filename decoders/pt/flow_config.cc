#include "decoders/pt/flow_config.h"

#include "decoders/pt/packet_config.h"


namespace ptprof::pt {

Status FillPtConfig(const PtParams& params, const FlowOptions& options, pt_config& config,
                    int& errata_status) {
  // CPU, errata and timing as for packet decoding; the buffer is set by the decoder.
  config = MakePtConfig({}, params, &errata_status);
  uint64_t addr_cfg = 0;
  for (int i = 0; i < 4; ++i)
    addr_cfg |= static_cast<uint64_t>(params.filter[i].cfg & 0xf) << (4 * i);
  config.addr_filter.config.addr_cfg = addr_cfg;
  config.addr_filter.addr0_a = params.filter[0].a;
  config.addr_filter.addr0_b = params.filter[0].b;
  config.addr_filter.addr1_a = params.filter[1].a;
  config.addr_filter.addr1_b = params.filter[1].b;
  config.addr_filter.addr2_a = params.filter[2].a;
  config.addr_filter.addr2_b = params.filter[2].b;
  config.addr_filter.addr3_a = params.filter[3].a;
  config.addr_filter.addr3_b = params.filter[3].b;
  if (options.insn_decoder) {
    config.flags.variant.insn.enable_tick_events = options.tick_events ? 1 : 0;
  } else {
    config.flags.variant.block.end_on_call = options.end_on_call ? 1 : 0;
    config.flags.variant.block.end_on_jump = options.end_on_jump ? 1 : 0;
    config.flags.variant.block.enable_tick_events = options.tick_events ? 1 : 0;
  }
  return {};
}

}  // namespace ptprof::pt
