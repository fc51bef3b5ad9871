#pragma once
// PlainInsnLength answers "how long is this 64-bit instruction, if it is a common one that does
// not change the flow of control?" without a full decoder. The fast engine's code graph decodes
// every instruction a trace executed once, and most of them are moves, arithmetic, pushes and
// pops whose only property it needs is their length: Zydis takes about 100 ns for each (about
// 60 ms of a compiler's first pass), a table walk a few. Anything outside the common subset
// (every branch, call, return, system or privileged instruction, VEX/EVEX/XOP, x87, string
// instructions with repeat prefixes, lock, address-size overrides, ...) answers 0, and the caller
// asks X86Decoder, so the answer is never a guess: where this gives a length, Zydis gives the same
// length and classifies the instruction as X86Kind::kOther with no branch displacement
// (x86_length_test.cc checks it at every byte offset of real binaries and on random bytes).
#include <cstddef>
#include <cstdint>

namespace ptprof {

// A plain instruction's length (0: not in the subset) and a key of what its mnemonic depends on
// (opcode, ModRM reg and register-or-memory, operand-size prefix, REX.W and REX.B): instructions
// with the same key have the same mnemonic in Zydis, so a caller that needs mnemonics asks Zydis
// once a key (x86_length_test checks that too). Keys are below kPlainInsnKeys.
struct PlainInsn {
  uint8_t length = 0;
  uint32_t key = 0;
};
inline constexpr uint32_t kPlainInsnKeys = uint32_t{1} << 17;

// The 64-bit mode instruction at the start of bytes[0, size), when it is in the common subset
// described above.
PlainInsn PlainInsnOf(const uint8_t* bytes, size_t size);
inline uint8_t PlainInsnLength(const uint8_t* bytes, size_t size) {
  return PlainInsnOf(bytes, size).length;
}

}  // namespace ptprof
