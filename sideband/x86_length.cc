#include "sideband/x86_length.h"

#include <array>

namespace ptprof {

namespace {

// What follows an opcode of the subset.
enum class Form : uint8_t {
  kNo,     // not in the subset
  kBare,   // nothing
  kIb,     // an 8-bit immediate
  kIz,     // a 16-bit (operand-size prefix, no REX.W) or 32-bit immediate
  kIv,     // a 16-, 32- or 64-bit immediate (mov r, imm)
  kM,      // a ModRM operand (with SIB and displacement)
  kMIb,    // a ModRM operand, then an 8-bit immediate
  kMIz,    // a ModRM operand, then a kIz immediate
  kGroup,  // a ModRM whose reg field picks the instruction (GroupForm)
};

using FormTable = std::array<Form, 256>;

constexpr FormTable OneByteForms() {
  FormTable t{};
  for (int base = 0x00; base <= 0x38; base += 8) {  // add, or, adc, sbb, and, sub, xor, cmp
    for (int k = 0; k < 4; ++k) t[base + k] = Form::kM;
    t[base + 4] = Form::kIb;
    t[base + 5] = Form::kIz;
  }
  for (int op = 0x50; op <= 0x5f; ++op) t[op] = Form::kBare;  // push, pop
  t[0x63] = Form::kM;                                         // movsxd
  t[0x68] = Form::kIz;                                        // push imm
  t[0x69] = Form::kMIz;                                       // imul
  t[0x6a] = Form::kIb;                                        // push imm8
  t[0x6b] = Form::kMIb;                                       // imul
  t[0x80] = Form::kMIb;
  t[0x81] = Form::kMIz;
  t[0x83] = Form::kMIb;
  for (int op = 0x84; op <= 0x8b; ++op) t[op] = Form::kM;  // test, xchg, mov
  t[0x8d] = Form::kGroup;                                  // lea (memory only)
  t[0x8f] = Form::kGroup;                                  // pop r/m (/0; else XOP)
  for (int op = 0x90; op <= 0x99; ++op) t[op] = Form::kBare;  // nop, xchg, cwde, cdq
  for (int op = 0x9c; op <= 0x9f; ++op) t[op] = Form::kBare;  // pushf, popf, sahf, lahf
  for (int op : {0xa4, 0xa5, 0xa6, 0xa7, 0xaa, 0xab, 0xac, 0xad, 0xae, 0xaf})
    t[op] = Form::kBare;  // movs, cmps, stos, lods, scas without a repeat prefix
  t[0xa8] = Form::kIb;
  t[0xa9] = Form::kIz;
  for (int op = 0xb0; op <= 0xb7; ++op) t[op] = Form::kIb;
  for (int op = 0xb8; op <= 0xbf; ++op) t[op] = Form::kIv;
  t[0xc0] = Form::kMIb;  // shifts
  t[0xc1] = Form::kMIb;
  t[0xc6] = Form::kGroup;  // mov r/m, imm (/0; else xabort, xbegin)
  t[0xc7] = Form::kGroup;
  t[0xc9] = Form::kBare;  // leave
  for (int op = 0xd0; op <= 0xd3; ++op) t[op] = Form::kM;  // shifts
  t[0xf5] = Form::kBare;                                   // cmc
  t[0xf6] = Form::kGroup;                                  // test, not, neg, mul, div
  t[0xf7] = Form::kGroup;
  for (int op : {0xf8, 0xf9, 0xfc, 0xfd}) t[op] = Form::kBare;  // clc, stc, cld, std
  t[0xfe] = Form::kGroup;                                       // inc, dec
  t[0xff] = Form::kGroup;                                       // inc, dec, push (not call, jmp)
  return t;
}

constexpr FormTable TwoByteForms() {  // after 0x0f
  FormTable t{};
  t[0x1f] = Form::kGroup;                                  // nop r/m (/0)
  for (int op = 0x40; op <= 0x4f; ++op) t[op] = Form::kM;  // cmovcc
  for (int op = 0x90; op <= 0x9f; ++op) t[op] = Form::kGroup;  // setcc (/0)
  for (int op : {0xa3, 0xab, 0xb3, 0xbb, 0xa5, 0xad, 0xaf, 0xb0, 0xb1, 0xb6, 0xb7, 0xbe, 0xbf,
                 0xbc, 0xbd, 0xc0, 0xc1})
    t[op] = Form::kM;  // bt*, shld/shrd by cl, imul, cmpxchg, movzx, movsx, bsf, bsr, xadd
  t[0xa4] = Form::kMIb;  // shld, shrd by imm8
  t[0xac] = Form::kMIb;
  t[0xba] = Form::kGroup;                                    // bt* imm8 (/4 to /7)
  for (int op = 0xc8; op <= 0xcf; ++op) t[op] = Form::kBare;  // bswap
  // SSE moves, compares and arithmetic without a repeat prefix.
  for (int op : {0x10, 0x11, 0x28, 0x29, 0x2e, 0x2f, 0x6e, 0x6f, 0x7e, 0x7f, 0xef})
    t[op] = Form::kM;
  for (int op = 0x54; op <= 0x5f; ++op) t[op] = Form::kM;
  return t;
}

constexpr FormTable kOneByte = OneByteForms();
constexpr FormTable kTwoByte = TwoByteForms();

// The form of a kGroup opcode with this ModRM (`two_byte`: after 0x0f), kNo outside the subset.
Form GroupForm(bool two_byte, uint8_t op, uint8_t modrm) {
  const unsigned reg = (modrm >> 3) & 7;
  if (two_byte) {
    if (op == 0x1f || (op >= 0x90 && op <= 0x9f)) return reg == 0 ? Form::kM : Form::kNo;
    if (op == 0xba) return reg >= 4 ? Form::kMIb : Form::kNo;
    return Form::kNo;
  }
  switch (op) {
    case 0x8d: return (modrm >> 6) != 3 ? Form::kM : Form::kNo;  // lea takes an address
    case 0x8f: return reg == 0 ? Form::kM : Form::kNo;
    case 0xc6: return reg == 0 ? Form::kMIb : Form::kNo;
    case 0xc7: return reg == 0 ? Form::kMIz : Form::kNo;
    case 0xf6: return reg == 0 ? Form::kMIb : reg == 1 ? Form::kNo : Form::kM;
    case 0xf7: return reg == 0 ? Form::kMIz : reg == 1 ? Form::kNo : Form::kM;
    case 0xfe: return reg <= 1 ? Form::kM : Form::kNo;
    case 0xff: return reg <= 1 || reg == 6 ? Form::kM : Form::kNo;
    default: return Form::kNo;
  }
}

// Bytes of the ModRM operand at p[0, avail) (ModRM, SIB, displacement; 64-bit addressing), or 0
// when they do not fit.
size_t ModRmBytes(const uint8_t* p, size_t avail) {
  if (avail == 0) return 0;
  const unsigned mod = p[0] >> 6, rm = p[0] & 7;
  size_t n = 1;
  if (mod == 3) return n;
  if (rm == 4) {
    if (avail < 2) return 0;
    n += 1;
    if (mod == 0 && (p[1] & 7) == 5) n += 4;  // no base: a 32-bit displacement
  } else if (mod == 0 && rm == 5) {
    n += 4;  // RIP-relative
  }
  if (mod == 1) n += 1;
  if (mod == 2) n += 4;
  return n <= avail ? n : 0;
}

}  // namespace

PlainInsn PlainInsnOf(const uint8_t* bytes, size_t size) {
  constexpr size_t kMaxLength = 15;
  if (size >= 4 && bytes[0] == 0xf3 && bytes[1] == 0x0f && bytes[2] == 0x1e && bytes[3] == 0xfa)
    return {4, uint32_t{1} << 16};  // endbr64
  size_t i = 0;
  bool opsize = false;
  for (;; ++i) {
    if (i >= size || i >= kMaxLength) return {};
    const uint8_t b = bytes[i];
    if (b == 0x66) {
      opsize = true;
    } else if (b != 0x26 && b != 0x2e && b != 0x36 && b != 0x3e && b != 0x64 && b != 0x65) {
      break;
    }
  }
  bool rex_w = false, rex_b = false;
  if ((bytes[i] & 0xf0) == 0x40) {
    rex_w = (bytes[i] & 8) != 0;
    rex_b = (bytes[i] & 1) != 0;
    if (++i >= size) return {};
  }
  bool two_byte = false;
  uint8_t op = bytes[i++];
  Form form = kOneByte[op];
  if (op == 0x0f) {
    if (i >= size) return {};
    two_byte = true;
    op = bytes[i++];
    form = kTwoByte[op];
    if (opsize && op >= 0xc8 && op <= 0xcf) return {};  // bswap of a 16-bit register
  }
  if (form == Form::kGroup) {
    if (i >= size) return {};
    form = GroupForm(two_byte, op, bytes[i]);
  }
  const size_t iz = opsize && !rex_w ? 2 : 4;
  size_t rest = 0;         // bytes after the opcode
  uint32_t modrm_key = 0;  // the ModRM's reg field and whether it names a register
  switch (form) {
    case Form::kNo:
    case Form::kGroup: return {};
    case Form::kBare: break;
    case Form::kIb: rest = 1; break;
    case Form::kIz: rest = iz; break;
    case Form::kIv: rest = rex_w ? 8 : opsize ? 2 : 4; break;
    case Form::kM:
    case Form::kMIb:
    case Form::kMIz: {
      const size_t modrm = ModRmBytes(bytes + i, size - i);
      if (modrm == 0) return {};
      rest = modrm + (form == Form::kMIb ? 1 : form == Form::kMIz ? iz : 0);
      modrm_key = ((bytes[i] >> 3) & 7) | ((bytes[i] >> 6) == 3 ? 8 : 0);
      break;
    }
  }
  const size_t length = i + rest;
  if (length > size || length > kMaxLength) return {};
  const uint32_t key = op | (two_byte ? 1u << 8 : 0) | modrm_key << 9 | (opsize ? 1u << 13 : 0) |
                       (rex_w ? 1u << 14 : 0) | (rex_b ? 1u << 15 : 0);
  return {static_cast<uint8_t>(length), key};
}

}  // namespace ptprof
