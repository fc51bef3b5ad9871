// Fuzz target: the packet path. Any byte string goes through the packet reader and the ptdump
// writer with time tracking on (TSC/MTC/CYC/CBR arithmetic and calibration): no crash, no hang,
// no unbounded allocation, whatever the input.
#include <cstdint>
#include <span>
#include <string_view>

#include "decoders/pt/ptdump_writer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ptprof::pt;
  PtParams params;
  // The first byte picks the timing parameters so that the fuzzer explores them too.
  if (size > 0) {
    params.mtc_freq = data[0] & 0xf;
    params.nom_freq = data[0] >> 4;
    params.cpuid_0x15_eax = 1 + (data[0] & 3);
    params.cpuid_0x15_ebx = 1 + (data[0] >> 2);
  }
  PtdumpOptions options;
  options.show_last_ip = true;
  options.show_exec_mode = true;
  options.track_time = true;
  options.show_time = true;
  options.time_as_delta = (size > 1 && (data[1] & 1));
  size_t lines = 0;
  PtdumpWriter writer(params, options, [&](std::string_view) { ++lines; });
  writer.Dump(std::span<const uint8_t>(data, size));
  return 0;
}
