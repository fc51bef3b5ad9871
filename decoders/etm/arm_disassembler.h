#pragma once
// ArmDisassembler answers "what is this Arm instruction, as text?" for A64, A32 and T32 with
// capstone, for decode's text output.
#include <string>

#include "src/model/trace_event.h"

namespace ptprof::etm {

class ArmDisassembler {
 public:
  ArmDisassembler();
  ~ArmDisassembler();
  ArmDisassembler(const ArmDisassembler&) = delete;
  ArmDisassembler& operator=(const ArmDisassembler&) = delete;

  // "bl 0x400560"; "" when the bytes do not decode or the mode is not an Arm one.
  std::string Format(const Instruction& insn) const;
  // Format with this thread's own disassembler: a capstone handle keeps state of its own (its last
  // error, T32's IT block), so threads that write parts of one output at once must not share one.
  static std::string FormatOnThisThread(const Instruction& insn);

 private:
  size_t a64_ = 0, a32_ = 0, t32_ = 0;  // capstone handles, 0 when unavailable
};

}  // namespace ptprof::etm
