#pragma once
// PtParams answers "how was this PT trace configured?": the recording CPU (for errata), the timing
// parameters needed to turn TSC/MTC/CYC into time, and the address-filter configuration. It is
// filled from command-line options today and from perf.data / .ptar metadata later, and is the only
// way the rest of ptprof describes a PT configuration (no libipt types leak out of decoders/pt).
#include <cstdint>
#include <optional>
#include <string>

#include "src/model/result.h"

namespace ptprof::pt {

struct PtCpu {
  uint16_t family = 0;
  uint8_t model = 0;
  uint8_t stepping = 0;
};

struct AddrFilter {
  uint8_t cfg = 0;  // 0 = off, 1 = FilterEn, 2 = TraceStop
  uint64_t a = 0;
  uint64_t b = 0;
};

struct PtParams {
  std::optional<PtCpu> cpu;      // unset: no errata workarounds (as with libipt's "--cpu none")
  bool cpu_auto = false;         // "--cpu auto": the CPU this program runs on
  uint8_t mtc_freq = 0;          // IA32_RTIT_CTL.MTCFreq
  uint8_t nom_freq = 0;          // MSR_PLATFORM_INFO[15:8]
  uint32_t cpuid_0x15_eax = 0;   // TSC:CTC ratio denominator
  uint32_t cpuid_0x15_ebx = 0;   // TSC:CTC ratio numerator
  AddrFilter filter[4];
};

// Parses "F/M" or "F/M/S" (decimal, as ptxed/ptdump accept them), "none" or "auto".
// `field` names the option in the error message.
Status ParseCpu(const std::string& text, const std::string& field, PtParams& params);

// Parses "N:CFG:FROM-TO" (IA32_RTIT_CTL.ADDRn_CFG and IA32_RTIT_ADDRn_A/B, C notation; N 0-3,
// CFG 0-15) into params.filter[N], as --addr-filter spells it.
Status ParseAddressFilter(const std::string& text, PtParams& params);

// Parses an unsigned integer in C notation (decimal, 0x hex, 0 octal) bounded by `max`.
Result<uint64_t> ParseUnsigned(const std::string& text, const std::string& field, uint64_t max);

}  // namespace ptprof::pt
