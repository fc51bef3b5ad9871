#include "src/analyses/patterns/builtin_patterns.h"

namespace ptprof::patterns {

const std::vector<BuiltinPattern>& BuiltinPatterns() {
  static const std::vector<BuiltinPattern> builtins = {
      {"superCLI", "pushf* ; pop r64 ;{8} cli | cli",
       "x86-64 interrupts off: local_irq_save() is pushf ; pop reg (save the flags) then cli, "
       "local_irq_disable() a bare cli; either way the interrupts go off at the cli"},
      {"superSTI", "push r64 ; popf* | sti",
       "x86-64 interrupts back on: local_irq_restore() of older kernels pushes the saved flags "
       "and pops them into EFLAGS (push reg ; popf), local_irq_enable() is a bare sti"},
      {"armIrqOff",
       "msr daifset, #2 | msr daifset, #3 | msr daifset, #6 | msr daifset, #7 | "
       "msr daifset, #10 | msr daifset, #11 | msr daifset, #14 | msr daifset, #15",
       "AArch64 interrupts off: msr daifset with the I bit (2) set in its mask, as "
       "local_irq_disable() (#2 or #3) and local_daif_mask() (#15) write it"},
      {"armIrqOn",
       "msr daifclr, #2 | msr daifclr, #3 | msr daifclr, #6 | msr daifclr, #7 | "
       "msr daifclr, #10 | msr daifclr, #11 | msr daifclr, #14 | msr daifclr, #15 | msr daif, r64",
       "AArch64 interrupts on: msr daifclr with the I bit in its mask (local_irq_enable()), or "
       "msr daif, xN, the restore of saved flags (local_irq_restore()), counted as an enable"},
      {"a32IrqOff", "cpsid i | cpsid if | cpsid ai | cpsid aif",
       "AArch32 interrupts off: cpsid with the I flag (local_irq_disable())"},
      {"a32IrqOn", "cpsie i | cpsie if | cpsie ai | cpsie aif",
       "AArch32 interrupts on: cpsie with the I flag (local_irq_enable())"},
      {"cpuRelax", "pause | yield",
       "one spin-wait hint: x86 pause (rep ; nop, what cpu_relax() emits) or Arm yield"},
      {"pauseRun", "pause ;{8} pause | yield ;{8} yield",
       "a spin-wait hint that follows another within 8 instructions: every turn of a "
       "cpu_relax() loop after its first"},
      {"kernelSIMD", "kernel:* ..., vec, ... | kernel:* ..., x87, ... | kernel:f*",
       "an instruction in the kernel half that uses a vector register (xmm/ymm/zmm, Arm "
       "v/q) or the x87 FPU (f* mnemonics, st registers): kernel FPU/SIMD use, which must sit "
       "between kernel_fpu_begin() and kernel_fpu_end()"},
      {"kernelFPUSave", "kernel:xsave* | kernel:fxsave* | kernel:xrstor* | kernel:fxrstor*",
       "the kernel saving or restoring FPU/SIMD register state (XSAVE family, FXSAVE): the cost "
       "side of kernel FPU use and of context switches"},
  };
  return builtins;
}

}  // namespace ptprof::patterns
