#include "decoders/pt/packet_config.h"

#include <cpuid.h>

#include <cstring>

namespace ptprof::pt {

pt_cpu HostCpu() {
  pt_cpu cpu;
  std::memset(&cpu, 0, sizeof cpu);
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (!__get_cpuid(0, &eax, &ebx, &ecx, &edx)) return cpu;
  char vendor[13] = {};
  std::memcpy(vendor, &ebx, 4);
  std::memcpy(vendor + 4, &edx, 4);
  std::memcpy(vendor + 8, &ecx, 4);
  cpu.vendor = std::strcmp(vendor, "GenuineIntel") == 0 ? pcv_intel : pcv_unknown;
  if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return cpu;
  const unsigned family = (eax >> 8) & 0xf;
  cpu.family = static_cast<uint16_t>(family == 0xf ? family + ((eax >> 20) & 0xf) : family);
  unsigned model = (eax >> 4) & 0xf;
  if (family == 0x6 || family == 0xf) model += (eax >> 12) & 0xf0;
  cpu.model = static_cast<uint8_t>(model);
  cpu.stepping = static_cast<uint8_t>(eax & 0xf);
  return cpu;
}

pt_config MakePtConfig(std::span<const uint8_t> trace, const PtParams& params,
                       int* errata_error) {
  pt_config config;
  pt_config_init(&config);
  // libipt takes a mutable pointer but never writes through the packet decoders.
  config.begin = const_cast<uint8_t*>(trace.data());
  config.end = config.begin + trace.size();
  if (params.cpu) {
    config.cpu.vendor = pcv_intel;
    config.cpu.family = params.cpu->family;
    config.cpu.model = params.cpu->model;
    config.cpu.stepping = params.cpu->stepping;
  } else if (params.cpu_auto) {
    config.cpu = HostCpu();
  }
  int status = 0;
  if (config.cpu.vendor != pcv_unknown) status = pt_cpu_errata(&config.errata, &config.cpu);
  if (errata_error) *errata_error = status < 0 ? status : 0;
  config.mtc_freq = params.mtc_freq;
  config.nom_freq = params.nom_freq;
  config.cpuid_0x15_eax = params.cpuid_0x15_eax;
  config.cpuid_0x15_ebx = params.cpuid_0x15_ebx;
  return config;
}

}  // namespace ptprof::pt
