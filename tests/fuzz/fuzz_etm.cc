// Fuzz target: the CoreSight deformatter and the OpenCSD decoders behind decoders/etm. The first
// byte picks the buffer format (formatted frames, DSTREAM, single source) and the protocol
// (ETMv4, ETE, ETMv3, PTM, STM); the rest is the trace, decoded into the model (with a small A64
// code image, so that ranges get followed) and listed as packets: no crash, no hang, no exception
// out of the adapter, whatever the input.
#include <cstdint>
#include <memory>
#include <vector>

#include "decoders/etm/etm_decoder.h"

namespace {

struct Discard : ptprof::EventSink {
  uint64_t events = 0;
  void OnEvent(const ptprof::TraceEvent&) override { ++events; }
};

ptprof::etm::SourceConfig ConfigFor(uint8_t selector) {
  using namespace ptprof::etm;
  SourceConfig cfg;
  cfg.source = "fuzz";
  cfg.arch = {ArchVersion::kV8, CoreProfile::kA};
  switch ((selector >> 2) % 5) {
    case 0:
      cfg.protocol = Protocol::kEtmV4;
      cfg.registers = {{"TRCCONFIGR", 0x18c1}, {"TRCTRACEIDR", 0x10}, {"TRCIDR0", 0x28000EA1},
                       {"TRCIDR1", 0x4100F403}, {"TRCIDR2", 0x488}};
      break;
    case 1:
      cfg.protocol = Protocol::kEte;
      cfg.arch = {ArchVersion::kAA64, CoreProfile::kA};
      cfg.registers = {{"TRCCONFIGR", 0x1}, {"TRCTRACEIDR", 0x10}, {"TRCIDR0", 0x28000EA1},
                       {"TRCIDR1", 0x4100FFF3}, {"TRCIDR2", 0x88}, {"TRCDEVARCH", 0x47705A13}};
      break;
    case 2:
      cfg.protocol = Protocol::kEtmV3;
      cfg.arch = {ArchVersion::kV7, CoreProfile::kA};
      cfg.registers = {{"ETMCR", 0x10001860}, {"ETMIDR", 0x410CF250}, {"ETMCCER", 0x344008F2},
                       {"ETMTRACEIDR", 0x10}};
      break;
    case 3:
      cfg.protocol = Protocol::kPtm;
      cfg.arch = {ArchVersion::kV7, CoreProfile::kA};
      cfg.registers = {{"ETMCR", 0x10001000}, {"ETMIDR", 0x411CF301}, {"ETMCCER", 0x8EA},
                       {"ETMTRACEIDR", 0x10}};
      break;
    default:
      cfg.protocol = Protocol::kStm;
      cfg.registers = {{"STMTCSR", 0x00100003}};
      break;
  }
  return cfg;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ptprof::etm;
  if (size == 0) return 0;
  const uint8_t selector = data[0];
  const BufferFormat format = selector % 3 == 0   ? BufferFormat::kCoreSightFrames
                              : selector % 3 == 1 ? BufferFormat::kDstreamFrames
                                                  : BufferFormat::kSingleSource;
  std::vector<uint8_t> trace(data + 1, data + size);
  auto code = std::make_shared<const std::vector<uint8_t>>(4096, 0x1f);  // a page of junk code
  for (bool packets_only : {false, true}) {
    EtmDecodeOptions options;
    options.packets_only = packets_only;
    auto decoder = EtmDecoder::Create(format, {ConfigFor(selector)}, options);
    if (!decoder) continue;
    if (!packets_only) (void)(*decoder)->AddMemory(MemoryImage{0x400000, "", code, "fuzz"});
    if (packets_only) {
      uint64_t lines = 0;
      (*decoder)->ListPackets(trace, [&lines](const std::string&) { ++lines; });
    } else {
      Discard sink;
      (*decoder)->Decode(trace, sink);
    }
  }
  return 0;
}
