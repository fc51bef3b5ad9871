#pragma once
// FlowObserver is what the flow decoder reports to, in libipt's own terms (it stays inside
// decoders/pt): every event (status updates included), every block or instruction with the trace
// offset it was decoded at, every error with the offset and IP the decoder could name, and the
// end of the trace. Two observers exist: FlowToModel (model TraceEvents for everything else in
// ptprof) and PtxedPrinter (libipt ptxed's exact text).
#include <cstdint>
#include <optional>

#include <intel-pt.h>

#include "sideband/x86_insn.h"

namespace ptprof::pt {

class FlowToModel;

struct FlowError {
  enum class Kind : uint8_t { kSync, kDecode };
  Kind kind = Kind::kDecode;
  int code = 0;                  // libipt error code (< 0)
  std::optional<uint64_t> offset;  // trace offset, when the decoder could tell
  int offset_error = 0;          // why it could not (libipt error code)
  uint64_t ip = 0;               // where decoding failed (0 when not known)
};

// Where a block or instruction came from.
struct FlowStep {
  uint64_t offset = 0;          // decoder offset before the block/instruction was decoded
  uint64_t decoder_offset = 0;  // decoder offset after it (where a later diagnostic points)
  std::optional<uint64_t> tsc;  // the decoder's time after it, when known
};

// A block the fast engine walked, with its last instruction decoded: what OnBlock's pt_block and
// FlowStep say about it, in the few fields the fast engine knows (never truncated: it hands an
// instruction that crosses sections to libipt).
struct WalkedBlock {
  uint64_t ip = 0;      // the first instruction
  uint64_t end_ip = 0;  // the last instruction
  uint32_t ninsn = 0;
  pt_exec_mode mode = ptem_unknown;
  int isid = 0;
  bool speculative = false;
  bool has_tsc = false;
  uint64_t tsc = 0;             // FlowStep::tsc, when has_tsc
  uint64_t offset = 0;          // FlowStep::offset
  uint64_t decoder_offset = 0;  // FlowStep::decoder_offset
  const X86Insn* last = nullptr;
};

class FlowObserver {
 public:
  virtual ~FlowObserver() = default;
  // `offset` is where the decoder stood when the event was read.
  virtual void OnEvent(const pt_event& event, uint64_t offset) = 0;
  // Asked after each event: the image to decode from from now on (e.g. the process that sideband
  // says runs after this event), or null to keep the current one. It must outlive the decode.
  virtual pt_image* ImageAfterEvent() { return nullptr; }
  // A block (block decoder). Also called for a block cut short by an error if it holds
  // instructions.
  virtual void OnBlock(const pt_block& block, const FlowStep& step) = 0;
  // A block of the fast engine (its last instruction decoded already); by default passed on as
  // OnBlock.
  virtual void OnWalkedBlock(const WalkedBlock& walked) {
    pt_block block{};
    block.ip = walked.ip;
    block.end_ip = walked.end_ip;
    block.ninsn = static_cast<uint16_t>(walked.ninsn);
    block.mode = walked.mode;
    block.isid = walked.isid;
    block.speculative = walked.speculative ? 1 : 0;
    FlowStep step;
    step.offset = walked.offset;
    step.decoder_offset = walked.decoder_offset;
    if (walked.has_tsc) step.tsc = walked.tsc;
    OnBlock(block, step);
  }
  // An instruction (instruction decoder), also the one decoded just before an error.
  virtual void OnInsn(const pt_insn& insn, const FlowStep& step) = 0;
  virtual void OnError(const FlowError& error) = 0;
  // The trace ended where the decoder still knew the IP.
  virtual void OnEndOfTrace() {}
  // The model, when this observer is the model: the fast engine then hands it blocks directly.
  virtual FlowToModel* AsModel() { return nullptr; }
};

}  // namespace ptprof::pt
