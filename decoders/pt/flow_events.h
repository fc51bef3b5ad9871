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
#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <unordered_map>
#include <vector>

#include "decoders/pt/flow_observer.h"
#include "decoders/pt/image_cache.h"
#include "sideband/x86_insn.h"
#include "src/model/block_batch.h"
#include "src/model/event_sink.h"
#include "src/model/run_ref.h"

namespace ptprof::pt {

// Where TakeRun may pass a run's blocks on as one reference (src/model/run_ref.h) instead of
// copies: blocks whose trace offsets lie in [from, until) of the whole trace, once `after_blocks`
// blocks have been taken. Only for a sink that keeps them in EventChunks (a worker of a parallel
// decode); empty by default.
struct RunRefWindow {
  uint64_t from = UINT64_MAX;
  uint64_t until = 0;
  uint64_t after_blocks = 0;
  bool Holds(uint64_t first_offset, uint64_t offset, uint64_t blocks) const {
    return first_offset >= from && offset < until && blocks >= after_blocks;
  }
};

// The decoder's time before instruction number `insn` (counted from 0 over the blocks taken, as
// FlowCounts::insns counts them) and those after it up to the last of its block, where the time
// may have moved since the instruction before: noted after events (some of which the model does
// not carry, and which may have moved the time past their own) and at the start. A block carries
// only the time after it, which is its last instruction's (InsnExpander).
struct InsnTimeNote {
  uint64_t insn = 0;
  uint64_t tsc = kUnknownTime;
};

// The image whose code the instructions from instruction number `insn` on lie in (counted as
// InsnTimeNote counts them): noted where the tasks followed from sideband move the decode to
// another address space (PtImageCache's image index), for InsnExpander.
struct InsnImageNote {
  uint64_t insn = 0;
  size_t image = 0;
};

struct FlowModelOptions {
  int32_t cpu = kUnknownId;  // written into every event header
  int32_t pid = kUnknownId;  // written into every event header until SwitchTask changes them
  int32_t tid = kUnknownId;
  // Added to every event's offset: where the decoded bytes begin in the whole trace.
  uint64_t offset_base = 0;
  RunRefWindow run_refs;
  // Where to note the time after events (NoteTimeBefore); null: nowhere.
  std::deque<InsnTimeNote>* time_notes = nullptr;
  // Where to note the image the decode reads after a task switch (NoteImageBefore); null:
  // nowhere.
  std::deque<InsnImageNote>* image_notes = nullptr;
  // Whether batches say which of their blocks are runs (BlockBatch::runs), given a run source.
  bool mark_runs = false;
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
  FlowToModel* AsModel() override { return this; }

  // Another task runs from here on (known from sideband): a ContextSwitch{kSideband} event at
  // `offset` (with `tsc` when known), and later events carry the new pid/tid.
  void SwitchTask(int32_t pid, int32_t tid, uint64_t offset, std::optional<uint64_t> tsc);

  // The fast engine, after events (or at the start): the decoder's time now, before the next
  // instruction taken. Noted when FlowModelOptions::time_notes is set.
  void NoteTimeBefore(uint64_t tsc) { NoteBefore(options_.time_notes, &InsnTimeNote::tsc, tsc); }
  // The decode reads the code of image `image` from here on (before the next instruction taken).
  // Noted when FlowModelOptions::image_notes is set.
  void NoteImageBefore(size_t image) {
    NoteBefore(options_.image_notes, &InsnImageNote::image, image);
  }

  // Passes on the blocks resolved so far, which wait to go on in batches (BlockBatch). Call it
  // where the sink must have everything decoded so far (before_finish of DecodeFlowRange).
  void FlushBlocks();

  // Sends what is still held back. Call once after the decode.
  void Finish();

  // The fast engine's inner loop: whether the next block, if it follows the held one with no
  // event between them, may go to TakeRunBlock (the held block ended at a branch, so the next one
  // cannot join it, and nothing waits after it).
  bool TakesRunBlocks() const {
    return holding_ && held_after_.empty() && held_kind_ != X86Kind::kOther;
  }
  // TakeRunBlock for `n` blocks at once, packed with their ends resolved by the next (the last
  // one's is resolved later, as it is held): blocks[0] began at trace offset `first_offset`, the
  // others at `offset`; all carry `tsc` when `has_tsc`. `insns` is their instruction count,
  // `last_kind` what the last one's last instruction is.
  // (Inlined into the fast engine's run step, its hottest loop, whatever the compiler's
  // estimate of its size.)
  // `note`: the run's RunNote, when its keeper holds one (BlockBatch::runs).
  [[gnu::always_inline]] void TakeRun(const RunBlock* blocks, uint32_t n, uint64_t insns,
                                      X86Kind last_kind, uint64_t last_ip, uint64_t first_offset,
                                      uint64_t offset, bool has_tsc, uint64_t tsc,
                                      RunNote* note = nullptr) {
    PassHeldTo(blocks[0].first_ip);
    holding_ = true;  // the last of these blocks, from here on
    if (OtherBatch()) NewBatch();
    PutRun(blocks, n, insns, has_tsc ? tsc : kUnknownTime, first_offset, offset, note);
    held_last_ip_ = last_ip;
    held_kind_ = last_kind;
  }
  // TakeRun for the fast engine's steady loop, where the held block is the last block of a run,
  // or a block whose end does not depend on where it went, and these blocks are where it went:
  // the held block goes on with the end and span it has (which is what TakeRun would work out),
  // and none of TakeRun's other checks can change anything (same cpu/pid/tid). blocks[0] is
  // stamped at `first_offset`, the others at `offset`, all with `tsc` (kUnknownTime: none).
  // Call EndRuns after the last.
  [[gnu::always_inline]] void AppendRun(const RunBlock* blocks, uint32_t n, uint64_t insns,
                                        uint64_t tsc, uint64_t first_offset, uint64_t offset,
                                        RunNote* note = nullptr) {
    if (!(held_source_ && JoinsRef(held().end)) && ++batch_count_ >= kBatchBlocks) FlushBlocks();
    PutRun(blocks, n, insns, tsc, first_offset, offset, note);
  }
  // AppendRun for one block walked from `ip` to `last_ip` (at most 4 GiB on), whose branch a TIP
  // decided (so its end does not depend on where it went), stamped at `offset` with `tsc`.
  void AppendBlock(uint64_t ip, uint64_t last_ip, uint32_t ninsn, const X86Insn& last,
                   ExecMode mode, bool speculative, uint64_t tsc, uint64_t offset) {
    RunBlock block;
    block.first_ip = ip;
    block.span = static_cast<uint32_t>(last_ip - ip);
    block.insns = ninsn;
    block.last_insn_size = last.length;
    block.end = static_cast<uint8_t>(kEndOfKind[static_cast<uint8_t>(last.kind)]);
    block.mode = static_cast<uint8_t>(mode);
    block.flags = speculative ? kPackedSpeculative : 0;
    AppendRun(&block, 1, ninsn, tsc, offset, offset);
  }
  // After AppendRun: the held block (the last one appended) carries `tsc` instead of the stamp
  // AppendRun gave it (the time moved on at a TIP after its run).
  void RestampHeld(uint64_t tsc) {
    held().tsc = tsc;
    held_source_ = nullptr;  // no longer stamped as the run reference before it
  }
  // After AppendRun: the held block's last instruction and its kind.
  void EndRuns(uint64_t last_ip, X86Kind last_kind) {
    held_last_ip_ = last_ip;
    held_kind_ = last_kind;
  }
  // OnWalkedBlock for such a block (which also ends at a branch), without its general checks:
  // resolves the held block by where this one starts and holds this one.
  void TakeRunBlock(uint64_t ip, uint64_t end_ip, uint32_t ninsn, const X86Insn& last,
                    ExecMode mode, bool speculative, uint64_t offset, bool has_tsc,
                    uint64_t tsc) {
    PassHeldTo(ip);
    Hold(ip, end_ip, ninsn, last.length, last.kind, mode, speculative, false, offset, has_tsc,
         tsc);
  }

  // The blocks TakeRun and AppendRun are given lie unchanged in memory that `source` names
  // (BlockBatch::run_source; 0: none): the batches then say which of their blocks are runs.
  void SetRunSource(uint64_t source) {
    if (!options_.mark_runs) source = 0;
    if (source == run_source_) return;
    FlushBlocks();
    run_source_ = source;
  }

  const FlowCounts& counts() const { return counts_; }

 private:
  // Notes `value` in `field` of the note before the next instruction taken (replacing what a
  // note there says already: no instruction since); nothing when `notes` is null.
  template <class Note, class Value>
  void NoteBefore(std::deque<Note>* notes, Value Note::*field, Value value) {
    if (!notes) return;
    if (notes->empty() || notes->back().insn != counts_.insns) {
      notes->emplace_back();
      notes->back().insn = counts_.insns;
    }
    notes->back().*field = value;
  }
  // How the held-back block ended, given what came next.
  enum class Next : uint8_t { kFlowAt, kInterrupt, kStop, kUnknown };
  void Resolve(Next next, uint64_t ip = 0);
  // Passes a non-block event on (after the blocks before it), or holds it after the held block.
  void Emit(TraceEvent event);
  // The held block lives in the batch, in the slot after the blocks already resolved: passing it
  // on is counting that slot in (or, when its span does not pack, PassWide).
  PackedEvent& held() { return batch_blocks_[batch_count_]; }
  const PackedEvent& held() const { return batch_blocks_[batch_count_]; }
  void PassHeld() {
    PackedEvent& h = held();
    const uint64_t span = held_last_ip_ - h.first_ip_or_index;
    if (held_last_ip_ < h.first_ip_or_index || span > UINT32_MAX) return PassWide();
    h.span = static_cast<uint32_t>(span);
    if (++batch_count_ >= kBatchBlocks) FlushBlocks();
  }
  void PassWide();
  // The fast engine's case of Resolve: the held block ended at a branch (held_kind_) and the
  // next block starts at `next_ip`; passes it on.
  void PassHeldTo(uint64_t next_ip) {
    PackedEvent& h = held();
    const uint8_t end = static_cast<uint8_t>(
        held_kind_ == X86Kind::kCondJump
            ? (next_ip == held_last_ip_ + h.last_insn_size ? BlockEnd::kCondNotTaken
                                                          : BlockEnd::kCondTaken)
            : kEndOfKind[static_cast<uint8_t>(held_kind_)]);
    holding_ = false;
    if (held_source_ && JoinsRef(end)) return;
    h.end = end;
    PassHeld();
  }
  // TakeRun's and AppendRun's blocks, once the held block has gone on: written from the batch
  // slot after the blocks passed on (the batch goes on first when they do not fit), as one run
  // reference where the window allows, else copied and stamped; the last of them is held.
  [[gnu::always_inline]] void PutRun(const RunBlock* blocks, uint32_t n, uint64_t insns,
                                     uint64_t tsc, uint64_t first_offset, uint64_t offset,
                                     RunNote* note) {
    if (batch_count_ + n > kBatchBlocks + 1) FlushBlocks();
    PackedEvent* out = &batch_blocks_[batch_count_];
    const uint64_t stamp_offset = options_.offset_base + offset;
    const uint64_t start_offset = options_.offset_base + first_offset;
    uint32_t slots = n;  // batch slots written, the held block's included
    if (n >= 3 && options_.run_refs.Holds(start_offset, stamp_offset, counts_.blocks) &&
        WriteRunRef(blocks, n, insns, tsc, start_offset, stamp_offset, out)) {
      slots = 2;
    } else {
      held_source_ = nullptr;
      const RunStamp stamp{tsc, stamp_offset};
      PackedEvent* to = out;
      for (const RunBlock* from = blocks; from != blocks + n; ++from)
        StampRunBlock(*from, stamp, *to++);
      out[0].offset = start_offset;
      // The last one, held (its end not known yet), with them: FlushBlocks leaves it out when
      // it goes in the next batch.
      if (run_source_ != 0 && n > kMinBatchRun)
        batch_runs_[batch_run_count_++] = BatchRun{out, blocks, n, note};
    }
    batch_count_ += slots - 1;
    counts_.blocks += n;
    counts_.insns += insns;
    if (batch_count_ == kBatchBlocks) {
      // The held block's slot is the last one: pass the others on now.
      FlushBlocks();
    }
  }
  // Whether the held block, ending in `end`, is the next block of the run that the reference
  // before it refers to, exactly as stored there: then the reference takes it in and its slot is
  // free. (The held block is that block as copied, stamped as the reference, unless changed since,
  // which clears held_source_.)
  bool JoinsRef(uint8_t end);
  // TakeRun's blocks[0, n - 1) as one run reference in out[0], blocks[n - 1] copied to out[1] as
  // the held block (false, nothing written: the reference cannot hold them).
  bool WriteRunRef(const RunBlock* blocks, uint32_t n, uint64_t insns, uint64_t tsc,
                   uint64_t first_offset, uint64_t offset, PackedEvent* out);
  // Whether the batch is of another cpu/pid/tid than the blocks now decoded; NewBatch passes it
  // on and starts one of theirs.
  bool OtherBatch() const {
    return options_.cpu != batch_.cpu || options_.pid != batch_.pid || options_.tid != batch_.tid;
  }
  void NewBatch() {
    FlushBlocks();
    batch_.cpu = options_.cpu;
    batch_.pid = options_.pid;
    batch_.tid = options_.tid;
  }
  // Makes a block the held one (the batch goes on first when it is of another cpu/pid/tid).
  void Hold(uint64_t ip, uint64_t end_ip, uint32_t ninsn, uint8_t last_size, X86Kind last_kind,
            ExecMode mode, bool speculative, bool truncated, uint64_t offset, bool has_tsc,
            uint64_t tsc) {
    if (OtherBatch()) NewBatch();
    held_source_ = nullptr;
    PackedEvent& h = held();
    h.first_ip_or_index = ip;
    held_last_ip_ = end_ip;
    h.insns = ninsn;
    h.last_insn_size = last_size;
    h.end = static_cast<uint8_t>(BlockEnd::kUnknown);
    h.mode = static_cast<uint8_t>(mode);
    h.flags = (speculative ? kPackedSpeculative : 0) | (truncated ? kPackedTruncated : 0);
    h.context = 0;
    h.tsc = has_tsc ? tsc : kUnknownTime;
    h.offset = options_.offset_base + offset;
    held_kind_ = last_kind;
    holding_ = true;
    counts_.blocks += 1;
    counts_.insns += ninsn;
  }
  EventHeader Header(uint64_t offset) const;
  bool LastInsn(const pt_block& block, X86Insn& insn);
  // OnBlock's work; `known` is the block's last instruction (null when it does not decode).
  void TakeBlock(const WalkedBlock& block, bool truncated, const X86Insn* known);
  // Appends `block` to the held block when it continues it in straight-line code (above).
  bool MergeIntoHeld(const WalkedBlock& block, const X86Insn& known);
  // The decoded instruction at `ip` of section `isid` (traces run the same code over and over).
  const X86Insn* CachedInsn(int isid, uint64_t ip, const uint8_t* raw, size_t size, ExecMode mode);

  struct CacheEntry {
    uint64_t ip = 0;
    int isid = 0;
    ExecMode mode = ExecMode::kUnknown;
    bool used = false;   // the slot holds an address
    bool valid = false;  // the bytes decoded
    X86Insn insn;
  };
  // The cache entry for `ip`, or nullptr when it holds nothing for this section and mode.
  CacheEntry* Lookup(int isid, uint64_t ip, ExecMode mode) {
    CacheEntry& entry = insn_cache_[InsnSlot(ip)];
    return entry.used && entry.isid == isid && entry.mode == mode ? &entry : nullptr;
  }
  // The slot of insn_cache_ holding `ip`, or the free one where it goes (open addressing, linear
  // probing: one address per slot, its section and mode those it was decoded in last).
  size_t InsnSlot(uint64_t ip) const {
    const size_t mask = insn_cache_.size() - 1;
    size_t i = static_cast<size_t>((ip * 0x9e3779b97f4a7c15ull) >> 32) & mask;
    while (insn_cache_[i].used && insn_cache_[i].ip != ip) i = (i + 1) & mask;
    return i;
  }

  EventSink& sink_;
  const PtImageCache& images_;
  FlowModelOptions options_;
  X86Decoder x86_;
  FlowCounts counts_;
  // The last block, held until what follows it says how it ended, and the events after it. It
  // is kept packed in the batch (held()), its last IP apart in case the span does not pack; its
  // cpu/pid/tid are the batch's.
  bool holding_ = false;
  uint64_t held_last_ip_ = 0;
  std::vector<TraceEvent> held_after_;
  X86Kind held_kind_ = X86Kind::kOther;
  static const BlockEnd kEndOfKind[];
  // Instructions decoded, by address: a power of two slots, at most half of them used (an
  // instruction is looked up for every one a trace executes, so one slot read rather than a
  // bucket and a node).
  std::vector<CacheEntry> insn_cache_ = std::vector<CacheEntry>(1 << 12);
  size_t insn_cache_used_ = 0;
  // Resolved blocks not passed on yet, all of one cpu/pid/tid (batch_), and the held one after
  // them.
  static constexpr size_t kBatchBlocks = 512;
  // Blocks the batch's run references stand for beyond their one slot each (counts_.passed).
  uint64_t batch_ref_blocks_ = 0;
  // The run block the held one was copied from, when a reference to the blocks before it is the
  // batch's last record (JoinsRef).
  const RunBlock* held_source_ = nullptr;
  std::vector<PackedEvent> batch_blocks_ = std::vector<PackedEvent>(kBatchBlocks + 1);
  size_t batch_count_ = 0;
  BlockBatch batch_;
  // The batch's stretches of run blocks (BlockBatch::runs), of kMinBatchRun blocks at least, and
  // the keeper of the runs the blocks come from (SetRunSource).
  static constexpr uint32_t kMinBatchRun = 2;
  std::vector<BatchRun> batch_runs_ = std::vector<BatchRun>(kBatchBlocks / kMinBatchRun + 1);
  size_t batch_run_count_ = 0;
  uint64_t run_source_ = 0;
};

// Converts one libipt event; returns false for events the model does not carry on their own
// (status updates, asynchronous branches, which end the previous block instead).
bool EventToModel(const pt_event& event, EventBody& body);

}  // namespace ptprof::pt
