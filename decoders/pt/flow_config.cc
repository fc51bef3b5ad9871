#include "decoders/pt/flow_config.h"

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
  __get_cpuid(1, &eax, &ebx, &ecx, &edx);
  PtCpu cpu;
  unsigned family = (eax >> 8) & 0xf;
  unsigned model = (eax >> 4) & 0xf;
  if (family == 0xf) family += (eax >> 20) & 0xff;  // extended family
  if (family == 0x6 || family == 0xf) model += ((eax >> 16) & 0xf) << 4;
  cpu.family = static_cast<uint16_t>(family);
  cpu.model = static_cast<uint8_t>(model);
  cpu.stepping = static_cast<uint8_t>(eax & 0xf);
  return cpu;
}

Status FillPtConfig(const PtParams& params, const FlowOptions& options, pt_config& config,
                    int& errata_status) {
  errata_status = 0;
  pt_config_init(&config);
  std::optional<PtCpu> cpu = params.cpu;
  if (params.cpu_auto) cpu = ReadHostCpu();
  if (cpu) {
    config.cpu.vendor = pcv_intel;
    config.cpu.family = cpu->family;
    config.cpu.model = cpu->model;
    config.cpu.stepping = cpu->stepping;
    int status = pt_cpu_errata(&config.errata, &config.cpu);
    if (status < 0) errata_status = status;
  }
  config.mtc_freq = params.mtc_freq;
  config.nom_freq = params.nom_freq;
  config.cpuid_0x15_eax = params.cpuid_0x15_eax;
  config.cpuid_0x15_ebx = params.cpuid_0x15_ebx;
  uint64_t addr_cfg = 0;
  for (int i = 0; i < 4; ++i)
    addr_cfg |= static_cast<uint64_t>(params.filter[i].cfg & 0xf) << (4 * i);
  config.addr_filter.config.addr_cfg = addr_cfg;
  config.addr_filter.addr0_a = params.filter[0].a;
  config.addr_filter.addr0_b = params.filter[0].b;
  config.addr_filter.addr1_a = params.filter[1].a;
  config.addr_filter.addr1_b = params.filter[1].b;
  config.addr_filter.addr2_a = params.filter[2].a;
  config.addr_filter.addr2_b = params.filter[2].b;
  config.addr_filter.addr3_a = params.filter[3].a;
  config.addr_filter.addr3_b = params.filter[3].b;
  if (options.insn_decoder) {
    config.flags.variant.insn.enable_tick_events = options.tick_events ? 1 : 0;
  } else {
    config.flags.variant.block.end_on_call = options.end_on_call ? 1 : 0;
    config.flags.variant.block.end_on_jump = options.end_on_jump ? 1 : 0;
    config.flags.variant.block.enable_tick_events = options.tick_events ? 1 : 0;
  }
  return {};
}

}  // namespace ptprof::pt
