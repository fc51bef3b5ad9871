#include "decoders/pt/trace_encoder.h"

#include <cstring>
#include <vector>

#include <catch2/catch.hpp>
#include <intel-pt.h>

using namespace ptprof;
using namespace ptprof::pt;

namespace {

// A tiny program at 0x1000 with a loop, a call/return pair, a syscall and an indirect call.
//   1000: mov ecx, 3        b9 03 00 00 00
//   1005: call 0x1012       e8 08 00 00 00
//   100a: dec ecx           ff c9
//   100c: jnz 0x1005        75 f7
//   100e: syscall           0f 05
//   1010: call rax          ff d0          (rax = 0x1012)
//   1012: nop               90
//   1013: ret               c3
const uint64_t kBase = 0x1000;
const std::vector<uint8_t> kCode = {0xb9, 0x03, 0x00, 0x00, 0x00, 0xe8, 0x08, 0x00, 0x00, 0x00,
                                    0xff, 0xc9, 0x75, 0xf7, 0x0f, 0x05, 0xff, 0xd0, 0x90, 0xc3};

// The instructions the program executes, each with where execution went next.
std::vector<ExecutedInsn> ExecutedFlow() {
  std::vector<ExecutedInsn> flow;
  flow.push_back({0x1000, 5, BranchKind::kNone, 0x1005, 0});
  for (int i = 3; i > 0; --i) {
    flow.push_back({0x1005, 5, BranchKind::kDirectCall, 0x1012, 0x1012});
    flow.push_back({0x1012, 1, BranchKind::kNone, 0x1013, 0});
    flow.push_back({0x1013, 1, BranchKind::kReturn, 0x100a, 0});
    flow.push_back({0x100a, 2, BranchKind::kNone, 0x100c, 0});
    flow.push_back({0x100c, 2, BranchKind::kCondJump, i > 1 ? 0x1005u : 0x100eu, 0x1005});
  }
  flow.push_back({0x100e, 2, BranchKind::kSyscall, 0x1010, 0});
  flow.push_back({0x1010, 2, BranchKind::kIndirectCall, 0x1012, 0});
  flow.push_back({0x1012, 1, BranchKind::kNone, 0x1013, 0});
  return flow;
}

int ReadCode(uint8_t* buffer, size_t size, const pt_asid*, uint64_t ip, void*) {
  if (ip < kBase || ip >= kBase + kCode.size()) return -pte_nomap;
  size_t n = std::min<size_t>(size, kBase + kCode.size() - ip);
  std::memcpy(buffer, kCode.data() + (ip - kBase), n);
  return static_cast<int>(n);
}

struct Decoded {
  std::vector<uint64_t> ips;
  std::vector<pt_event_type> events;
  int error = 0;
};

// Decodes with libipt's instruction decoder, the independent check of the encoder.
Decoded DecodeWithLibipt(std::vector<uint8_t> trace) {
  Decoded out;
  pt_config config;
  pt_config_init(&config);
  config.begin = trace.data();
  config.end = trace.data() + trace.size();
  pt_insn_decoder* decoder = pt_insn_alloc_decoder(&config);
  REQUIRE(decoder);
  pt_image* image = pt_insn_get_image(decoder);
  pt_image_set_callback(image, ReadCode, nullptr);
  int status = pt_insn_sync_forward(decoder);
  while (status >= 0) {
    while (status & pts_event_pending) {
      pt_event event;
      status = pt_insn_event(decoder, &event, sizeof event);
      if (status < 0) break;
      out.events.push_back(event.type);
    }
    if (status < 0) break;
    pt_insn insn;
    status = pt_insn_next(decoder, &insn, sizeof insn);
    if (status < 0) break;
    out.ips.push_back(insn.ip);
  }
  if (status != -pte_eos) out.error = status;
  pt_insn_free_decoder(decoder);
  return out;
}

std::vector<uint8_t> Encode(const EncoderOptions& options, EncoderStats* stats = nullptr) {
  TraceEncoder encoder(options);
  REQUIRE(encoder.Begin(0x1000, ExecMode::k64Bit, 1000));
  uint64_t tsc = 1000;
  for (const auto& insn : ExecutedFlow()) REQUIRE(encoder.Step(insn, tsc += 10));
  REQUIRE(encoder.End());
  if (stats) *stats = encoder.stats();
  return encoder.bytes();
}

std::vector<uint64_t> ExpectedIps() {
  std::vector<uint64_t> ips;
  for (const auto& insn : ExecutedFlow()) ips.push_back(insn.ip);
  return ips;
}

}  // namespace

TEST_CASE("an encoded flow decodes back to the same instructions with libipt") {
  EncoderStats stats;
  auto trace = Encode(EncoderOptions{}, &stats);
  Decoded decoded = DecodeWithLibipt(trace);
  CHECK(decoded.error == 0);
  CHECK(decoded.ips == ExpectedIps());
  // enabled at the start, disabled at the syscall, resumed after it, disabled at the end.
  std::vector<pt_event_type> expected_events = {ptev_enabled, ptev_exec_mode, ptev_disabled,
                                                ptev_enabled, ptev_async_disabled};
  CHECK(decoded.events == expected_events);
  CHECK(stats.insns == ExpectedIps().size());
  CHECK(stats.tips == 1);        // only the indirect call needs a target packet
  CHECK(stats.tnt_bits == 6);    // three jnz outcomes and three compressed returns
  CHECK(stats.psbs == 1);
}

TEST_CASE("without return compression every return is a TIP") {
  EncoderOptions options;
  options.return_compression = false;
  EncoderStats stats;
  Decoded decoded = DecodeWithLibipt(Encode(options, &stats));
  CHECK(decoded.error == 0);
  CHECK(decoded.ips == ExpectedIps());
  CHECK(stats.tips == 4);
  CHECK(stats.tnt_bits == 3);
}

TEST_CASE("frequent PSBs keep the stream decodable from every PSB") {
  EncoderOptions options;
  options.psb_period = 1;
  EncoderStats stats;
  auto trace = Encode(options, &stats);
  CHECK(stats.psbs >= 5);
  Decoded decoded = DecodeWithLibipt(trace);
  CHECK(decoded.error == 0);
  CHECK(decoded.ips == ExpectedIps());
}

TEST_CASE("an asynchronous transfer becomes FUP+TIP") {
  TraceEncoder encoder;
  REQUIRE(encoder.Begin(0x1000, ExecMode::k64Bit, 0));
  // mov ecx,3 executes, then a signal handler at 0x1012 runs (nop; then stop).
  REQUIRE(encoder.Step({0x1000, 5, BranchKind::kNone, 0x1012, 0}, 1));
  REQUIRE(encoder.Step({0x1012, 1, BranchKind::kNone, 0x1013, 0}, 2));
  REQUIRE(encoder.End());
  CHECK(encoder.stats().async_branches == 1);
  Decoded decoded = DecodeWithLibipt(encoder.bytes());
  CHECK(decoded.error == 0);
  CHECK(decoded.ips == std::vector<uint64_t>{0x1000, 0x1012});
}
