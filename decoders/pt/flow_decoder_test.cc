#include "decoders/pt/flow_decoder.h"

#include <cinttypes>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "decoders/pt/flow_testing.h"

using namespace ptprof;
using namespace ptprof::pt;
using namespace ptprof::pt::testing;

namespace {

// Records every callback as one line of text.
class Recorder : public FlowObserver {
 public:
  void OnEvent(const pt_event& event, uint64_t) override {
    if (event.status_update) return;
    lines.push_back("event " + std::to_string(event.type));
  }
  void OnBlock(const pt_block& block, const FlowStep& step) override {
    char buf[96];
    std::snprintf(buf, sizeof buf, "block %" PRIx64 "-%" PRIx64 " n%u", block.ip, block.end_ip,
                  block.ninsn);
    lines.push_back(buf);
    if (step.tsc) last_tsc = *step.tsc;
  }
  void OnInsn(const pt_insn& insn, const FlowStep&) override {
    char buf[64];
    std::snprintf(buf, sizeof buf, "insn %" PRIx64, insn.ip);
    lines.push_back(buf);
  }
  void OnError(const FlowError& error) override {
    char buf[128];
    std::snprintf(buf, sizeof buf, "%s %s at %" PRIx64,
                  error.kind == FlowError::Kind::kSync ? "sync-error" : "error",
                  pt_errstr(pt_errcode(error.code)), error.ip);
    lines.push_back(buf);
    if (error.offset) error_offsets.push_back(*error.offset);
  }
  void OnEndOfTrace() override { lines.push_back("end"); }

  std::vector<std::string> lines;
  std::vector<uint64_t> error_offsets;
  uint64_t last_tsc = 0;
};

std::vector<std::string> Decode(const std::vector<uint8_t>& trace, FlowOptions options,
                                Recorder& recorder) {
  TempFile code(SampleProgram());
  ImageSet images;
  REQUIRE(images.AddRaw(RawImageSpec{code.path(), 0, UINT64_MAX, kSampleBase}));
  PtImageCache cache;
  REQUIRE(cache.AddAll(images));
  pt_config config;
  int errata = 0;
  REQUIRE(FillPtConfig(PtParams{}, options, config, errata));
  FlowDecoder decoder(config, options, trace, cache);
  REQUIRE(decoder.Run(recorder));
  CHECK(decoder.synced());
  return recorder.lines;
}

const std::string kEnabled = "event " + std::to_string(ptev_enabled);
const std::string kDisabled = "event " + std::to_string(ptev_disabled);

}  // namespace

TEST_CASE("the block decoder ends blocks at calls and where trace is needed") {
  Recorder r;
  auto lines = Decode(SampleTrace(), FlowOptions{}, r);
  // Calls end a block (the return stack needs updating); so do conditional branches and returns.
  std::vector<std::string> want = {kEnabled,           "block 1000-1001 n2", "block 1005-1005 n1",
                                   "block 1010-1011 n2", "block 100a-100a n1", kDisabled};
  CHECK(lines == want);
  CHECK(r.last_tsc == 0x1234);
}

TEST_CASE("end-on-call and end-on-jump keep blocks contiguous") {
  Recorder r;
  FlowOptions options;
  options.end_on_call = true;
  options.end_on_jump = true;
  auto lines = Decode(SampleTrace(), options, r);
  std::vector<std::string> want = {kEnabled,           "block 1000-1001 n2", "block 1005-1005 n1",
                                   "block 1010-1011 n2", "block 100a-100a n1", kDisabled};
  CHECK(lines == want);
}

TEST_CASE("the instruction decoder reports every instruction") {
  Recorder r;
  FlowOptions options;
  options.insn_decoder = true;
  auto lines = Decode(SampleTrace(), options, r);
  std::vector<std::string> want = {kEnabled,    "insn 1000", "insn 1001", "insn 1005",
                                   "insn 1010", "insn 1011", "insn 100a", kDisabled};
  CHECK(lines == want);
}

TEST_CASE("an error is reported and decoding resumes at the next PSB") {
  // First segment: tracing starts where no code is mapped. Second: the good sample trace.
  PacketWriter bad;
  bad.Psb().ModeExec(ptem_64bit).PsbEnd().TipPge(0x5000).TipPgdSuppressed();
  std::vector<uint8_t> trace = bad.bytes();
  std::vector<uint8_t> good = SampleTrace();
  // The error leaves the decoder at the next PSB, which a forward sync skips: libipt (and ptxed)
  // resume at the one after it.
  trace.insert(trace.end(), good.begin(), good.end());
  size_t third_psb = trace.size();
  trace.insert(trace.end(), good.begin(), good.end());
  for (bool insn : {false, true}) {
    Recorder r;
    FlowOptions options;
    options.insn_decoder = insn;
    auto lines = Decode(trace, options, r);
    std::string all;
    for (const auto& line : lines) all += line + "; ";
    INFO(all);
    REQUIRE(lines.size() >= 3);
    CHECK(lines[0] == kEnabled);
    CHECK(lines[1] == "error no memory mapped at this address at 5000");
    REQUIRE(r.error_offsets.size() == 1);
    CHECK(r.error_offsets[0] < third_psb);
    CHECK(lines.back() == kDisabled);
    CHECK(std::count(lines.begin(), lines.end(), kEnabled) == 2);
  }
}

TEST_CASE("garbage between PSBs becomes an error, not an abort") {
  PacketWriter w;
  w.Psb().ModeExec(ptem_64bit).PsbEnd().TipPge(kSampleBase);
  w.Raw({0x02, 0xff, 0xff});  // an unknown extended opcode
  std::vector<uint8_t> trace = w.bytes();
  std::vector<uint8_t> good = SampleTrace();
  trace.insert(trace.end(), good.begin(), good.end());
  Recorder r;
  auto lines = Decode(trace, FlowOptions{}, r);
  bool saw_error = false;
  for (const auto& line : lines) saw_error |= line.rfind("error", 0) == 0;
  CHECK(saw_error);
  CHECK(lines.back() == kDisabled);
}

TEST_CASE("a trace without a PSB never synchronises") {
  TempFile code(SampleProgram());
  ImageSet images;
  REQUIRE(images.AddRaw(RawImageSpec{code.path(), 0, UINT64_MAX, kSampleBase}));
  PtImageCache cache;
  REQUIRE(cache.AddAll(images));
  pt_config config;
  int errata = 0;
  REQUIRE(FillPtConfig(PtParams{}, FlowOptions{}, config, errata));
  std::vector<uint8_t> trace(64, 0x00);  // pad packets only
  FlowDecoder decoder(config, FlowOptions{}, trace, cache);
  Recorder r;
  REQUIRE(decoder.Run(r));
  CHECK_FALSE(decoder.synced());
  CHECK(r.lines.empty());
}

TEST_CASE("the configuration carries CPU errata, timing and filters") {
  PtParams params;
  params.cpu = PtCpu{6, 85, 4};
  params.mtc_freq = 3;
  params.nom_freq = 37;
  params.cpuid_0x15_eax = 2;
  params.cpuid_0x15_ebx = 308;
  params.filter[0] = AddrFilter{1, 0x1000, 0x2000};
  params.filter[2] = AddrFilter{2, 0x3000, 0x4000};
  FlowOptions options;
  options.end_on_call = true;
  pt_config config;
  int errata = 0;
  REQUIRE(FillPtConfig(params, options, config, errata));
  CHECK(errata == 0);
  CHECK(config.cpu.vendor == pcv_intel);
  CHECK(config.cpu.model == 85);
  CHECK(config.errata.skl014 == 1);
  CHECK(config.mtc_freq == 3);
  CHECK(config.cpuid_0x15_ebx == 308);
  CHECK(config.addr_filter.config.ctl.addr0_cfg == 1);
  CHECK(config.addr_filter.config.ctl.addr2_cfg == 2);
  CHECK(config.addr_filter.addr2_b == 0x4000);
  CHECK(config.flags.variant.block.end_on_call == 1);

  params.cpu = PtCpu{0, 0, 0};
  REQUIRE(FillPtConfig(params, options, config, errata));
  CHECK(errata == -pte_bad_cpu);
}
