#pragma once
// RangeExpander answers "which instructions did this Arm ExecBlock execute?": it walks the block
// from its first to its last address in the memory images (fixed 4-byte A64/A32 instructions,
// 2- or 4-byte T32 ones), producing one Instruction each with its bytes; the last one carries
// the block's end. Missing memory is a gap, never a guess.
#include <functional>
#include <vector>

#include "decoders/etm/etm_decoder.h"
#include "src/model/trace_event.h"

namespace ptprof::etm {

class RangeExpander {
 public:
  explicit RangeExpander(std::vector<MemoryImage> memory) : memory_(std::move(memory)) {}

  // Emits the block's instructions (same header as the block) through `emit`; a TraceGap
  // (no_image) when some of its bytes are not in memory.
  void Expand(const TraceEvent& block_event, const std::function<void(const TraceEvent&)>& emit) const;

  // Up to `size` bytes at `address` copied to `out`; false when not all are in memory.
  bool Read(uint64_t address, uint8_t* out, size_t size) const;

 private:
  std::vector<MemoryImage> memory_;
};

// The size of the T32 instruction whose first halfword is `first`: 4 for 32-bit encodings.
inline int T32Size(uint16_t first) {
  uint16_t top = first >> 11;
  return (top == 0x1d || top == 0x1e || top == 0x1f) ? 4 : 2;
}

}  // namespace ptprof::etm
