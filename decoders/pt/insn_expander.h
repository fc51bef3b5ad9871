#pragma once
// InsnExpander answers "which instructions did these blocks execute?" for the fast flow engine,
// which walks blocks only: an EventSink stage that passes every event on unchanged except blocks,
// each of which it replaces by its instructions, as libipt's instruction decoder reports them.
//
// What libipt's instruction decoder says of an instruction follows from the block it lies in,
// because the query decoder is only asked at a block's last instruction:
// - every instruction of a block carries the block's trace offset (the decoder's offset before
//   it, which only a query moves);
// - the last one carries the block's time (the time after it); any other carries the time of
//   the instruction before it, unless events came between them (some of which the model does
//   not carry: an asynchronous branch, a status update), after which it carries the time the
//   flow engine noted there (FlowToModel::NoteTimeBefore; an event's own time may lie before);
// - its bytes, mode and speculative flag are the block's; its class is its decoded kind.
// The golden test fast_engine_parallel compares the two, line for line, on every trace. On
// damaged traces libipt's block and instruction decoders may disagree with each other (a disable
// without an IP at a conditional branch: an event to one, a desync to the other); the expansion
// then follows the block decoder's reading (tests/fuzz/fuzz_flow.cc checks the rest).
//
// Each block's instructions are decoded once (Zydis) and kept by the block's image, first address
// and mode; a longer block from the same address decodes them again. With tasks followed from
// sideband, the engine notes where the decode moves to another address space's image
// (FlowToModel::NoteImageBefore), and the blocks from there on are read from that image.
#include <cstddef>
#include <cstdint>
#include <deque>
#include <string>
#include <unordered_map>
#include <vector>

#include "decoders/pt/flow_events.h"
#include "decoders/pt/image_cache.h"
#include "sideband/x86_insn.h"
#include "src/model/block_batch.h"
#include "src/model/event_sink.h"

namespace ptprof::pt {

class InsnExpander : public EventSink {
 public:
  // Reads the code of `images`' image `image_index`; takes the times after events from `notes`
  // (FlowModelOptions::time_notes), which the flow engine fills as it goes, and, when tasks are
  // followed, the image each block's code lies in from `image_notes` (FlowModelOptions::
  // image_notes; null: always `image_index`). All must outlive this.
  InsnExpander(EventSink& next, const PtImageCache& images, std::deque<InsnTimeNote>& notes,
               size_t image_index = 0, std::deque<InsnImageNote>* image_notes = nullptr);

  void OnEvent(const TraceEvent& event) override;
  void OnBlocks(const BlockBatch& batch) override;
  void OnEnd() override;

  // Events passed on so far (instructions and the other events).
  uint64_t passed() const { return passed_; }
  // Instructions passed on so far.
  uint64_t insns() const { return insns_; }
  // Why a block could not be expanded (empty: every block was), naming its address and trace
  // offset. Nothing is passed on from that block on.
  const std::string& failure() const { return failure_; }

 private:
  // A block's instructions: decoded_[first, first + count).
  struct Decoded {
    uint32_t first = 0;
    uint32_t count = 0;
  };
  // The first `insns` instructions from `ip` in `mode`, or null after setting failure_ (the last
  // must lie at `last_ip`).
  const Instruction* InstructionsOf(uint64_t ip, uint64_t last_ip, uint32_t insns,
                                    ExecMode mode, uint64_t offset);
  // Passes on the instructions of `block`, with `header`'s cpu/pid/tid and offset (`clock`,
  // when set, gives the ns of times taken from notes).
  void Expand(const ExecBlock& block, const EventHeader& header, const BlockClock* clock);
  void Fail(std::string why);
  // Fail, for the block at `ip` (trace offset `offset`), saying `what`.
  void FailAt(uint64_t ip, uint64_t offset, const std::string& what);

  // The image the instructions from number `first` on lie in, after the image notes up to there.
  void FollowImageNotes(uint64_t first);

  using DecodedByIp = std::unordered_map<uint64_t, Decoded>;  // key: ip ^ mode << 60
  EventSink& next_;
  const PtImageCache& images_;
  size_t image_index_;
  X86Decoder x86_;
  std::vector<Instruction> decoded_;
  // The blocks decoded, per image (address spaces may hold other code at the same address).
  std::unordered_map<size_t, DecodedByIp> by_image_;
  DecodedByIp* by_ip_;  // the current image's
  std::deque<InsnTimeNote>& notes_;
  std::deque<InsnImageNote>* image_notes_;
  // The last instruction's time, once one is known.
  uint64_t last_tsc_ = kUnknownTime;
  uint64_t last_time_ns_ = kUnknownTime;
  bool time_known_ = false;
  TraceEvent event_;  // the instruction being passed on, reused
  uint64_t passed_ = 0;
  uint64_t insns_ = 0;
  std::string failure_;
};

}  // namespace ptprof::pt
