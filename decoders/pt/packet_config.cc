#include "decoders/pt/packet_config.h"

#include <cpuid.h>

#include <cstring>

namespace ptprof::pt {

std::optional<PtCpu> ReadHostCpu() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (!__get_cpuid(0, &eax, &ebx, &ecx, &edx)) return std::nullopt;
  char vendor[13] = {};
  std::memcpy(vendor, &ebx, 4);
  std::memcpy(vendor + 4, &edx, 4);
  std::memcpy(vendor + 8, &ecx, 4);
  if (std::strcmp(vendor, "GenuineIntel") != 0) return std::nullopt;
  if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return std::nullopt;
  PtCpu cpu;
  unsigned family = (eax >> 8) & 0xf;
  unsigned model = (eax >> 4) & 0xf;
  if (family == 0xf) family += (eax >> 20) & 0xff;  // extended family
  if (family == 0x6 || family == 0xf) model += ((eax >> 16) & 0xf) << 4;  // extended model
  cpu.family = static_cast<uint16_t>(family);
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
  std::optional<PtCpu> cpu = params.cpu;
  if (params.cpu_auto) cpu = ReadHostCpu();
  int status = 0;
  if (cpu) {
    config.cpu.vendor = pcv_intel;
    config.cpu.family = cpu->family;
    config.cpu.model = cpu->model;
    config.cpu.stepping = cpu->stepping;
    status = pt_cpu_errata(&config.errata, &config.cpu);
  }
  if (errata_error) *errata_error = status < 0 ? status : 0;
  config.mtc_freq = params.mtc_freq;
  config.nom_freq = params.nom_freq;
  config.cpuid_0x15_eax = params.cpuid_0x15_eax;
  config.cpuid_0x15_ebx = params.cpuid_0x15_ebx;
  return config;
}

}  // namespace ptprof::pt
