#include "decoders/etm/range_expander.h"

#include <cinttypes>
#include <cstdio>
#include <cstring>

namespace ptprof::etm {

bool RangeExpander::Read(uint64_t address, uint8_t* out, size_t size) const {
  for (const MemoryImage& m : memory_) {
    if (address >= m.address && address - m.address + size <= m.bytes->size()) {
      std::memcpy(out, m.bytes->data() + (address - m.address), size);
      return true;
    }
  }
  return false;
}

void RangeExpander::Expand(const TraceEvent& block_event,
                           const std::function<void(const TraceEvent&)>& emit) const {
  const auto& b = std::get<ExecBlock>(block_event.body);
  uint64_t ip = b.first_ip;
  for (uint32_t n = 0; n < b.insns; ++n) {
    Instruction insn;
    insn.ip = ip;
    insn.mode = b.mode;
    uint8_t bytes[4] = {};
    int size = 4;
    bool ok = true;
    if (b.mode == ExecMode::kT32) {
      ok = Read(ip, bytes, 2);
      if (ok) size = T32Size(static_cast<uint16_t>(bytes[0] | bytes[1] << 8));
      if (ok && size == 4) ok = Read(ip, bytes, 4);
    } else {
      ok = Read(ip, bytes, 4);
    }
    if (!ok) {
      TraceEvent gap{block_event.header, TraceGap{}};
      auto& g = std::get<TraceGap>(gap.body);
      g.reason = GapReason::kNoImage;
      g.ip = ip;
      g.has_ip = true;
      g.detail = "no code bytes for the instruction (" + std::to_string(b.insns - n) +
                 " instructions of the block not listed)";
      emit(gap);
      return;
    }
    insn.size = static_cast<uint8_t>(size);
    std::memcpy(insn.bytes, bytes, static_cast<size_t>(size));
    const bool last = n + 1 == b.insns;
    insn.iclass = last ? b.end : BlockEnd::kFallThrough;
    emit(TraceEvent{block_event.header, insn});
    ip += static_cast<uint64_t>(size);
  }
}

}  // namespace ptprof::etm
