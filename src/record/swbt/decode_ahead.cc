#include "src/record/swbt/decode_ahead.h"

namespace ptprof::swbt {

namespace {

// A window of code bytes read ahead of the decoder; refilled when fewer than a whole instruction
// (15 bytes) is left. Reads stop at page boundaries so that an unmapped next page only shortens
// the window.
class CodeWindow {
 public:
  CodeWindow(ReadMemoryFn read, void* context) : read_(read), context_(context) {}

  // The bytes at `address` (at least 15 unless the code ends there); size 0: unreadable.
  const uint8_t* At(uint64_t address, size_t* size) {
    if (address < base_ || address + 15 > base_ + size_) Fill(address);
    *size = address >= base_ && address < base_ + size_ ? base_ + size_ - address : 0;
    return bytes_ + (address - base_);
  }

 private:
  void Fill(uint64_t address) {
    base_ = address;
    size_ = 0;
    while (size_ < sizeof bytes_) {
      const uint64_t at = base_ + size_;
      const uint64_t page_end = (at | 4095) + 1;
      size_t want = sizeof bytes_ - size_;
      if (want > page_end - at) want = page_end - at;
      const size_t got = read_(context_, at, bytes_ + size_, want);
      size_ += got;
      if (got < want) break;
    }
  }

  ReadMemoryFn read_;
  void* context_;
  uint64_t base_ = 0;
  size_t size_ = 0;
  uint8_t bytes_[256];
};

}  // namespace

Run ScanRun(const ZydisDecoder& decoder, uint64_t start, ReadMemoryFn read, void* read_context) {
  Run run;
  run.start = start;
  CodeWindow window(read, read_context);
  uint64_t ip = start;
  int64_t delta = 0;
  ZydisDecodedInstruction insn;
  ZydisDecodedOperand operands[ZYDIS_MAX_OPERAND_COUNT];
  while (run.insns < kMaxRunInsns) {
    size_t size = 0;
    const uint8_t* bytes = window.At(ip, &size);
    if (size == 0 || !ZYAN_SUCCESS(ZydisDecoderDecodeFull(&decoder, bytes, size, &insn, operands))) {
      run.end = RunEnd::kDecodeFailure;
      return run;
    }
    ++run.insns;
    const BranchDesc branch = DescribeInstruction(insn, operands, ip);
    if (branch.kind != BranchKind::kNone) {
      run.end = RunEnd::kBranch;
      run.branch = branch;
      run.rsp_delta = static_cast<int32_t>(delta);
      return run;
    }
    if (run.rsp_known) {
      const StackEffect effect = StackEffectOf(insn, operands);
      run.rsp_known = effect.known;
      delta += effect.delta;
      if (delta > (1 << 30) || delta < -(1 << 30)) run.rsp_known = false;
    }
    ip += insn.length;
  }
  run.end = RunEnd::kTooLong;
  return run;
}

}  // namespace ptprof::swbt
