#pragma once
// BlockBatch answers "which blocks came next?" in bulk. A flow decoder produces tens of millions
// of ExecBlocks a second; handing each on as a 112-byte TraceEvent through a virtual call costs
// more than decoding it. So plain blocks (no ns time yet, all of one cpu/pid/tid) travel packed,
// a batch at a time, and a sink that wants them one by one gets exactly the TraceEvents they
// stand for (EventSink::OnBlocks' default). Nothing is lost: a block that does not pack is
// passed on as a TraceEvent instead.
#include <cstddef>
#include <cstdint>
#include <span>

#include "src/model/trace_event.h"

namespace ptprof {

// One event in 40 bytes: a packed block, or (in EventChunks) the index of an event kept whole.
struct PackedEvent {
  uint64_t first_ip_or_index = 0;
  uint64_t tsc = 0;
  uint64_t offset = 0;
  uint32_t span = 0;  // last_ip - first_ip
  uint32_t insns = 0;
  uint8_t last_insn_size = 0;
  uint8_t end = 0;
  uint8_t mode = 0;
  uint8_t flags = 0;    // kPacked*
  uint8_t context = 0;  // EventChunks: index into its (cpu, pid, tid) triples
};

inline constexpr uint8_t kPackedWhole = 1;
inline constexpr uint8_t kPackedSpeculative = 2;
inline constexpr uint8_t kPackedTruncated = 4;
// In EventChunks only: a reference to blocks kept elsewhere (src/model/run_ref.h), never in a
// batch a sink is given.
inline constexpr uint8_t kPackedRunRef = 8;

// Whether `event` is a block that packs: no ns times yet and at most 4 GiB from first to last IP.
inline bool Packable(const TraceEvent& event) {
  const auto* block = std::get_if<ExecBlock>(&event.body);
  return block && event.header.time_ns == kUnknownTime && block->end_time_ns == kUnknownTime &&
         block->last_ip >= block->first_ip && block->last_ip - block->first_ip <= UINT32_MAX;
}

// Packs a Packable event's block (context left 0).
void PackBlock(const TraceEvent& event, PackedEvent& out);

// The block `packed` stands for (its end time unknown).
void UnpackExecBlock(const PackedEvent& packed, ExecBlock& out);

// The block event `packed` stands for, in `out` (whose body becomes an ExecBlock).
void UnpackBlock(const PackedEvent& packed, int32_t cpu, int32_t pid, int32_t tid,
                 TraceEvent& out);

// How the blocks of a batch get their ns time from their tsc, once a stage of the pipeline knows
// the trace's clock (the decoder does not): applied to a block when it is unpacked, so a batch
// passes that stage without a copy.
class BlockClock {
 public:
  virtual ~BlockClock() = default;
  virtual uint64_t TimeOf(uint64_t tsc) const = 0;
};

// The index of the first of `blocks` at or past trace offset `offset` (blocks.size() when none
// is).
inline size_t FirstAtOrPast(std::span<const PackedEvent> blocks, uint64_t offset) {
  for (size_t i = 0; i < blocks.size(); ++i)
    if (blocks[i].offset >= offset) return i;
  return blocks.size();
}

// What a consumer found of a run, noted beside the run by its keeper (BatchRun::note) so that
// the consumer finds it there, in memory the decoder has just read, instead of in a table of its
// own. Its fields are the consumer's; `owner` says whose (0: nobody's yet).
struct RunNote {
  uint32_t owner = 0;
  uint8_t count = 0;
  uint8_t flags = 0;
  uint16_t items = 0;
  uint32_t first = 0;
  uint32_t value = 0;
};
static_assert(sizeof(RunNote) == 16);

// A stretch of a batch's blocks that is the same every time it comes: the `count` blocks from
// `at` on are copies (with their own trace offsets and tsc) of the `count` blocks at `run`, in
// memory that the batch's run source keeps unchanged while it lives (a TNT run of the fast
// engine, decoders/pt/fast/tnt_runs.h), but for the last one's end, which is its own (how a run
// ends depends on where the code went after it). A consumer may work such a stretch out once
// and keep what it found by (run source, `run`, `count`); `run` is a key only, never to be
// read. `note`,
// when given, is a RunNote the keeper holds for the run while it lives, for the consumer to read
// and write on the thread the batch is given on (one note a run, whatever its count: a consumer
// notes the count it found for).
struct BatchRun {
  const PackedEvent* at = nullptr;  // in the batch's blocks
  const void* run = nullptr;
  uint32_t count = 0;
  RunNote* note = nullptr;
};

// Blocks passed on together, in order, all with this cpu/pid/tid.
struct BlockBatch {
  std::span<const PackedEvent> blocks;
  int32_t cpu = kUnknownId;
  int32_t pid = kUnknownId;
  int32_t tid = kUnknownId;
  const BlockClock* clock = nullptr;  // null: the blocks have no ns time
  // Stretches of the blocks that are runs (BatchRun), in order; may be empty whatever the blocks.
  // A stage that passes on part of the batch (a subspan of its blocks) keeps them: a run that
  // does not lie wholly in the blocks it is given is not one for the consumer (RunAt).
  std::span<const BatchRun> runs = {};
  // Who keeps the runs' blocks: unique in the process to one keeper's lifetime (never reused),
  // so that what a consumer keeps of a run stays right; 0 with no runs.
  uint64_t run_source = 0;

  // The run whose stretch begins at blocks[i] and lies wholly in the blocks, or null. `next`
  // holds the index of the first run not yet passed: begin at 0 and ask for increasing i.
  const BatchRun* RunAt(size_t i, size_t& next) const {
    const PackedEvent* here = blocks.data() + i;
    while (next < runs.size() && runs[next].at < here) ++next;
    if (next == runs.size() || runs[next].at != here || runs[next].count > blocks.size() - i)
      return nullptr;
    return &runs[next];
  }

  // The header fields every block of the batch shares (cpu, pid, tid).
  EventHeader Header() const {
    EventHeader header;
    header.cpu = cpu;
    header.pid = pid;
    header.tid = tid;
    return header;
  }
  // Block i's time_ns, as its TraceEvent's header would have it.
  uint64_t TimeNs(size_t i) const {
    const uint64_t tsc = blocks[i].tsc;
    return clock && tsc != kUnknownTime ? clock->TimeOf(tsc) : kUnknownTime;
  }
  // Block i's header, as its TraceEvent's would be.
  EventHeader HeaderOf(size_t i) const {
    EventHeader header = Header();
    header.offset = blocks[i].offset;
    header.tsc = blocks[i].tsc;
    header.time_ns = TimeNs(i);
    return header;
  }
  // Block i as its TraceEvent.
  void Unpack(size_t i, TraceEvent& out) const {
    UnpackBlock(blocks[i], cpu, pid, tid, out);
    if (clock) out.header.time_ns = TimeNs(i);
  }
};

}  // namespace ptprof
