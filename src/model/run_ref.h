#pragma once
// A run reference stands in EventChunks for several packed blocks that lie, unchanging, in memory
// the decoder keeps for the whole decode (a TNT run of the fast engine, decoders/pt/fast/
// tnt_runs.h): a worker thread of a parallel decode then writes one 40-byte record for a run of
// blocks instead of 40 bytes a block, and the stitching thread expands it (ExpandRunRef) into a
// small batch right before the consumer, where it is read from the cache and not from memory the
// other core wrote. The blocks share the reference's tsc; the first has its own trace offset, the
// others the reference's.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "src/model/block_batch.h"

namespace ptprof {

// A block of a run as the decoder keeps it for the whole decode: a PackedEvent without its
// stamps (tsc, trace offset), which are the same for all the blocks a reference stands for and
// are added when the block is passed on (StampRunBlock). 24 bytes instead of 40: a large
// program's runs take tens of MB, fresh memory that costs more to fault in than to fill.
// Its bytes from `span` on are laid out as PackedEvent's, context (0) included, so that a stamp
// copies them in one piece.
struct RunBlock {
  uint64_t first_ip = 0;
  uint32_t span = 0;  // last_ip - first_ip
  uint32_t insns = 0;
  uint8_t last_insn_size = 0;
  uint8_t end = 0;
  uint8_t mode = 0;
  uint8_t flags = 0;
  uint8_t context = 0;     // always 0: a stamped block's context
  uint8_t unused[3] = {};  // PackedEvent's padding, copied with the rest
};
static_assert(sizeof(RunBlock) == 24 && sizeof(PackedEvent) == 40);
// The stamp's layout: RunBlock's bytes [8, 24) are PackedEvent's [24, 40), and tsc and offset lie
// side by side.
static_assert(offsetof(RunBlock, span) == 8 && offsetof(PackedEvent, span) == 24 &&
              offsetof(RunBlock, context) - offsetof(RunBlock, span) ==
                  offsetof(PackedEvent, context) - offsetof(PackedEvent, span) &&
              offsetof(RunBlock, flags) - offsetof(RunBlock, span) ==
                  offsetof(PackedEvent, flags) - offsetof(PackedEvent, span) &&
              offsetof(PackedEvent, offset) == offsetof(PackedEvent, tsc) + 8);
static_assert(std::is_trivially_copyable_v<RunBlock> && std::is_trivially_copyable_v<PackedEvent>);

// The stamps every block of a reference carries, in PackedEvent's order.
struct RunStamp {
  uint64_t tsc = 0;
  uint64_t offset = 0;
};

// `block` with `stamp` on it, context 0: three copies (8 bytes of address, 16 of stamps, 16 of
// the rest), where the fields one by one took twice as many instructions on the fast engine's
// hottest path.
inline void StampRunBlock(const RunBlock& block, const RunStamp& stamp, PackedEvent& out) {
  auto* to = reinterpret_cast<std::byte*>(&out);
  const auto* from = reinterpret_cast<const std::byte*>(&block);
  std::memcpy(to + offsetof(PackedEvent, first_ip_or_index), from + offsetof(RunBlock, first_ip),
              sizeof(uint64_t));
  std::memcpy(to + offsetof(PackedEvent, tsc), &stamp, sizeof stamp);
  std::memcpy(to + offsetof(PackedEvent, span), from + offsetof(RunBlock, span),
              sizeof(RunBlock) - offsetof(RunBlock, span));
}
inline void StampRunBlock(const RunBlock& block, uint64_t tsc, uint64_t offset,
                          PackedEvent& out) {
  StampRunBlock(block, RunStamp{tsc, offset}, out);
}

// Blocks a reference stands for at most.
inline constexpr uint32_t kRunRefMaxBlocks = 255;

inline bool IsRunRef(const PackedEvent& record) { return (record.flags & kPackedRunRef) != 0; }

// The reference to blocks[0, n) with `tsc` and `offset` stamped on them, blocks[0] at
// `first_offset`. False (nothing written) when it cannot hold them: n outside [1,
// kRunRefMaxBlocks] or `first_offset` not within 4 GiB before `offset`.
inline bool MakeRunRef(const RunBlock* blocks, uint32_t n, uint64_t insns, uint64_t tsc,
                       uint64_t first_offset, uint64_t offset, PackedEvent& out) {
  if (n == 0 || n > kRunRefMaxBlocks || first_offset > offset ||
      offset - first_offset > UINT32_MAX || insns > UINT32_MAX)
    return false;
  out.first_ip_or_index = reinterpret_cast<uintptr_t>(blocks);
  out.tsc = tsc;
  out.offset = offset;
  out.span = static_cast<uint32_t>(offset - first_offset);
  out.insns = static_cast<uint32_t>(insns);
  out.last_insn_size = static_cast<uint8_t>(n);
  out.end = 0;
  out.mode = 0;
  out.flags = kPackedRunRef;
  out.context = 0;
  return true;
}

// How many blocks `ref` stands for.
inline uint32_t RunRefBlocks(const PackedEvent& ref) { return ref.last_insn_size; }

// The trace offset of `ref`'s first block.
inline uint64_t RunRefFirstOffset(const PackedEvent& ref) { return ref.offset - ref.span; }

// Writes the blocks `ref` stands for to out[0, RunRefBlocks(ref)), as they were when referred to.
inline void ExpandRunRef(const PackedEvent& ref, PackedEvent* out) {
  const auto* blocks = reinterpret_cast<const RunBlock*>(ref.first_ip_or_index);
  const uint32_t n = RunRefBlocks(ref);
  for (uint32_t i = 0; i < n; ++i) StampRunBlock(blocks[i], ref.tsc, ref.offset, out[i]);
  out[0].offset = RunRefFirstOffset(ref);
}

}  // namespace ptprof
