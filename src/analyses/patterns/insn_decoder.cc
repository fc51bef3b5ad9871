#include "src/analyses/patterns/insn_decoder.h"

#include <capstone/capstone.h>

#include <algorithm>
#include <cstring>
#include <string>

#include "sideband/x86_insn.h"

namespace ptprof::patterns {

namespace {

// One capstone handle per Arm instruction set, opened on first use.
class CapstoneHandle {
 public:
  CapstoneHandle(cs_arch arch, cs_mode mode) : arch_(arch), mode_(mode) {}
  ~CapstoneHandle() {
    if (open_) cs_close(&handle_);
  }
  csh* Get() {
    if (!tried_) {
      tried_ = true;
      open_ = cs_open(arch_, mode_, &handle_) == CS_ERR_OK;
    }
    return open_ ? &handle_ : nullptr;
  }

 private:
  cs_arch arch_;
  cs_mode mode_;
  csh handle_ = 0;
  bool tried_ = false;
  bool open_ = false;
};

std::string Hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

}  // namespace

struct InsnDecoder::Impl {
  X86Decoder x86;
  CapstoneHandle a64{CS_ARCH_ARM64, CS_MODE_ARM};
  CapstoneHandle a32{CS_ARCH_ARM, CS_MODE_ARM};
  CapstoneHandle t32{CS_ARCH_ARM, CS_MODE_THUMB};

  Result<InsnText> DecodeArm(CapstoneHandle& handle, uint64_t ip, const uint8_t* bytes,
                             size_t size) {
    csh* h = handle.Get();
    if (!h) return Fail("capstone cannot open an Arm disassembler");
    cs_insn* insn = nullptr;
    size_t count = cs_disasm(*h, bytes, size, ip, 1, &insn);
    if (count == 0) return Fail("undecodable Arm instruction at " + Hex(ip));
    InsnText text = ParseInsnText(std::string(insn[0].mnemonic) + " " + insn[0].op_str);
    text.length = static_cast<uint8_t>(insn[0].size);
    cs_free(insn, count);
    return text;
  }
};

InsnDecoder::InsnDecoder() : impl_(std::make_unique<Impl>()) {}
InsnDecoder::~InsnDecoder() = default;

std::optional<InsnDecoder::Quick> InsnDecoder::QuickX86(const uint8_t* bytes, size_t size,
                                                        ExecMode mode) const {
  if (mode != ExecMode::k16Bit && mode != ExecMode::k32Bit && mode != ExecMode::k64Bit)
    return std::nullopt;
  auto insn = impl_->x86.Decode(bytes, size, mode);
  if (!insn) return std::nullopt;
  return Quick{insn->length, insn->mnemonic};
}

Result<InsnText> InsnDecoder::Decode(uint64_t ip, const uint8_t* bytes, size_t size,
                                     ExecMode mode) const {
  Result<InsnText> text = Fail("");
  switch (mode) {
    case ExecMode::k16Bit:
    case ExecMode::k32Bit:
    case ExecMode::k64Bit: {
      auto insn = impl_->x86.Decode(bytes, size, mode);
      if (!insn) return Fail("undecodable x86 instruction at " + Hex(ip));
      auto formatted = impl_->x86.Format(bytes, size, mode, ip);
      if (!formatted) return Fail("undecodable x86 instruction at " + Hex(ip));
      text = ParseInsnText(*formatted);
      text->length = insn->length;
      break;
    }
    case ExecMode::kA64:
      text = impl_->DecodeArm(impl_->a64, ip, bytes, size);
      break;
    case ExecMode::kA32:
      text = impl_->DecodeArm(impl_->a32, ip, bytes, size);
      break;
    case ExecMode::kT32:
      text = impl_->DecodeArm(impl_->t32, ip, bytes, size);
      break;
    default:
      return Fail("no instruction set known at " + Hex(ip) + " (execution mode unknown)");
  }
  if (!text) return text;
  std::memcpy(text->bytes, bytes, std::min<size_t>(text->length, sizeof text->bytes));
  text->kernel = IsKernelAddress(ip, mode);
  return text;
}

}  // namespace ptprof::patterns
