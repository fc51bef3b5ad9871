#include "decoders/etm/arm_disassembler.h"

#include <capstone/capstone.h>

namespace ptprof::etm {

namespace {
size_t Open(cs_arch arch, cs_mode mode) {
  csh handle = 0;
  return cs_open(arch, mode, &handle) == CS_ERR_OK ? handle : 0;
}
void Close(size_t handle) {
  if (handle) {
    csh h = handle;
    cs_close(&h);
  }
}
}  // namespace

ArmDisassembler::ArmDisassembler()
    : a64_(Open(CS_ARCH_ARM64, CS_MODE_LITTLE_ENDIAN)),
      a32_(Open(CS_ARCH_ARM, CS_MODE_ARM)),
      t32_(Open(CS_ARCH_ARM, CS_MODE_THUMB)) {}

ArmDisassembler::~ArmDisassembler() {
  Close(a64_);
  Close(a32_);
  Close(t32_);
}

std::string ArmDisassembler::Format(const Instruction& insn) const {
  size_t handle = insn.mode == ExecMode::kA64   ? a64_
                  : insn.mode == ExecMode::kA32 ? a32_
                  : insn.mode == ExecMode::kT32 ? t32_
                                                : 0;
  if (!handle || insn.size == 0) return {};
  cs_insn* out = nullptr;
  size_t n = cs_disasm(handle, insn.bytes, insn.size, insn.ip, 1, &out);
  if (n == 0) return {};
  std::string text = out[0].mnemonic;
  if (out[0].op_str[0] != '\0') text += std::string(" ") + out[0].op_str;
  cs_free(out, n);
  return text;
}

std::string ArmDisassembler::FormatOnThisThread(const Instruction& insn) {
  thread_local const ArmDisassembler disassembler;
  return disassembler.Format(insn);
}

}  // namespace ptprof::etm
