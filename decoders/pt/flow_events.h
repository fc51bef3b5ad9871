#pragma once
// FlowToModel answers "what does this libipt decode mean in ptprof's model?": it is a FlowObserver
// that turns blocks, instructions, events and errors into TraceEvents for an EventSink. It decides
// how each block ended (taken or not-taken conditional branch, call, syscall, interrupt, trace
// stop, ...) by decoding the block's last instruction and looking at where execution went next, so
// it holds a block back until that is known.
//
// Blocks are canonical: a block is a maximal run of instructions that ends at a control transfer,
// at an event, or at a section boundary. libipt's block decoder sometimes ends a block in
// straight-line code, depending on its history (its block cache), not on the trace; such a block
// is joined with the contiguous block after it when nothing lies between them, so that two
// decoders of the same trace (one started at a later PSB) report the same blocks. The joined
// block keeps the first part's offset and takes the second part's time.
#include <cstdint>
#include <optional>
#include <unordered_map>
#include <vector>

#include "decoders/pt/flow_observer.h"
#include "decoders/pt/image_cache.h"
#include "sideband/x86_insn.h"
#include "src/model/event_sink.h"

namespace ptprof::pt {

struct FlowModelOptions {
  int32_t cpu = kUnknownId;  // written into every event header
  int32_t pid = kUnknownId;  // written into every event header until SwitchTask changes them
  int32_t tid = kUnknownId;
  // Added to every event's offset: where the decoded bytes begin in the whole trace.
  uint64_t offset_base = 0;
};

struct FlowCounts {
  uint64_t blocks = 0;
  uint64_t insns = 0;
  uint64_t gaps = 0;
  uint64_t passed = 0;  // events passed to the sink so far (blocks are counted when taken)
};

class FlowToModel : public FlowObserver {
 public:
  FlowToModel(EventSink& sink, const PtImageCache& images, FlowModelOptions options);

  void OnEvent(const pt_event& event, uint64_t offset) override;
  void OnBlock(const pt_block& block, const FlowStep& step) override;
  void OnWalkedBlock(const WalkedBlock& walked) override;
  void OnInsn(const pt_insn& insn, const FlowStep& step) override;
  void OnError(const FlowError& error) override;
  void OnEndOfTrace() override;

  // Another task runs from here on (known from sideband): a ContextSwitch{kSideband} event at
  // `offset` (with `tsc` when known), and later events carry the new pid/tid.
  void SwitchTask(int32_t pid, int32_t tid, uint64_t offset, std::optional<uint64_t> tsc);

  // Sends what is still held back. Call once after the decode.
  void Finish();

  const FlowCounts& counts() const { return counts_; }

 private:
  // How the held-back block ended, given what came next.
  enum class Next : uint8_t { kFlowAt, kInterrupt, kStop, kUnknown };
  void Resolve(Next next, uint64_t ip = 0);
  // Appends `block` to the held block when it continues it in straight-line code (above).
  void Emit(TraceEvent event);
  EventHeader Header(uint64_t offset) const;
  bool LastInsn(const pt_block& block, X86Insn& insn);
  // OnBlock's work; `known` is the block's last instruction (null when it does not decode).
  void TakeBlock(const WalkedBlock& block, bool truncated, const X86Insn* known);
  bool MergeIntoHeld(const WalkedBlock& block, const X86Insn& known);
  // The decoded instruction at `ip` of section `isid` (traces run the same code over and over).
  const X86Insn* CachedInsn(int isid, uint64_t ip, const uint8_t* raw, size_t size, ExecMode mode);

  struct CacheEntry {
    int isid = 0;
    ExecMode mode = ExecMode::kUnknown;
    bool valid = false;  // the bytes decoded
    X86Insn insn;
  };
  // The cache entry for `ip`, or nullptr when it holds nothing for this section and mode.
  CacheEntry* Lookup(int isid, uint64_t ip, ExecMode mode);

  EventSink& sink_;
  const PtImageCache& images_;
  FlowModelOptions options_;
  X86Decoder x86_;
  FlowCounts counts_;
  // The block whose end is not known yet, followed by events that came after it.
  // The last block, held until what follows it says how it ended, and the events after it.
  bool holding_ = false;
  TraceEvent held_block_;
  std::vector<TraceEvent> held_after_;
  X86Kind held_kind_ = X86Kind::kOther;
  std::unordered_map<uint64_t, CacheEntry> insn_cache_;
};

// Converts one libipt event; returns false for events the model does not carry on their own
// (status updates, asynchronous branches, which end the previous block instead).
bool EventToModel(const pt_event& event, EventBody& body);

}  // namespace ptprof::pt
