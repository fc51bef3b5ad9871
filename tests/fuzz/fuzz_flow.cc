// Fuzz target: the flow path. Any byte string is decoded as PT against the sample program's code
// (traces/sample/sample, embedded at build time as a raw image at its link address), with the
// block decoder and with the instruction decoder, into model events: no crash, no hang, whatever
// the input.
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "decoders/pt/flow_session.h"
#include "sideband/image_set.h"

#ifndef PTPROF_FUZZ_IMAGE
#error "PTPROF_FUZZ_IMAGE must name the ELF file the fuzzed traces run over"
#endif

namespace {

class DiscardSink : public ptprof::EventSink {
 public:
  void OnEvent(const ptprof::TraceEvent&) override { ++events; }
  uint64_t events = 0;
};

const ptprof::ImageSet& Images() {
  static ptprof::ImageSet* images = [] {
    auto* set = new ptprof::ImageSet;
    ptprof::ElfImageSpec spec;
    spec.file = PTPROF_FUZZ_IMAGE;
    if (auto s = set->AddElf(spec); !s) {
      std::fprintf(stderr, "fuzz_flow: %s\n", s.error().message.c_str());
      std::abort();
    }
    return set;
  }();
  return *images;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<uint8_t> trace(data, data + size);
  for (bool insns : {false, true}) {
    ptprof::pt::FlowRequest request;
    request.insns = insns;
    DiscardSink sink;
    (void)ptprof::pt::DecodeFlow(trace, Images(), request, sink);
  }
  return 0;
}
