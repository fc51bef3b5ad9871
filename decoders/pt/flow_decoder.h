#pragma once
// FlowDecoder answers "what did the traced CPU execute?": it runs libipt's block decoder (default)
// or instruction decoder over one PT buffer and an image, drains events as they become pending,
// reports errors and resynchronises at the next PSB, and reports all of it to a FlowObserver.
// It never aborts on bad trace data: an error is reported and decoding goes on after it.
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <vector>

#include <intel-pt.h>

#include "decoders/pt/flow_config.h"
#include "decoders/pt/flow_observer.h"
#include "decoders/pt/image_cache.h"
#include "sideband/x86_insn.h"
#include "src/model/result.h"

namespace ptprof::pt {

class FlowDecoder {
 public:
  // `config` is a filled pt_config without a buffer; `trace` must outlive Run().
  FlowDecoder(const pt_config& config, const FlowOptions& options, std::span<const uint8_t> trace,
              const PtImageCache& images);
  ~FlowDecoder();
  FlowDecoder(const FlowDecoder&) = delete;
  FlowDecoder& operator=(const FlowDecoder&) = delete;

  // Asked before each block or instruction and before each event is reported, with the time
  // (the event's own TSC, else the decoder's: TSC of the last timing packet, nullopt before the
  // first) and the decoder's offset: the image
  // to read code from from now on, or null to keep the current one. This is how a caller follows
  // context switches it knows from sideband (the code of another process is mapped at the same
  // addresses). Set it before Run().
  using ImageSwitchHook = std::function<pt_image*(std::optional<uint64_t> tsc, uint64_t offset)>;
  void SetImageSwitchHook(ImageSwitchHook hook) { image_switch_ = std::move(hook); }

  // Fails only when libipt refuses the configuration (e.g. an empty buffer).
  Status Run(FlowObserver& observer);

  // Whether the decoder synchronised at least once (found a PSB).
  bool synced() const { return synced_; }

 private:
  Status RunBlocks(FlowObserver& observer);
  Status RunInsns(FlowObserver& observer);
  FlowError MakeError(FlowError::Kind kind, int code, uint64_t ip) const;
  uint64_t BlockErrorIp(const pt_block& block, int code) const;

  pt_config config_;
  FlowOptions options_;
  const PtImageCache& images_;
  X86Decoder x86_;
  pt_block_decoder* blk_ = nullptr;
  pt_insn_decoder* insn_ = nullptr;
  bool synced_ = false;
  ImageSwitchHook image_switch_;
};

}  // namespace ptprof::pt
