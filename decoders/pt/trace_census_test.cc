#include "decoders/pt/trace_census.h"

#include <cstdlib>
#include <string>

#include <catch2/catch.hpp>

#include "decoders/pt/trace_encoder.h"

using namespace ptprof;
using namespace ptprof::pt;

namespace {
// A short encoded flow: PSB+ with TSC, MODE.exec, TIP.PGE, one TNT, a TIP, FUP+TIP.PGD.
std::vector<uint8_t> SmallTrace() {
  TraceEncoder encoder;
  REQUIRE(encoder.Begin(0x1000, ExecMode::k64Bit, 0x5000));
  REQUIRE(encoder.Step({0x1000, 2, BranchKind::kCondJump, 0x1010, 0x1010}, 0x5001));
  REQUIRE(encoder.Step({0x1010, 2, BranchKind::kIndirectJump, 0x2000, 0}, 0x5002));
  REQUIRE(encoder.End());
  return encoder.bytes();
}
}  // namespace

TEST_CASE("the census counts packets by kind and finds PSBs and TSCs") {
  auto trace = SmallTrace();
  auto census = TakeCensus(trace, PtParams{});
  REQUIRE(census);
  CHECK(census->bytes == trace.size());
  CHECK(census->psb_offsets == std::vector<uint64_t>{0});
  CHECK(census->packets_by_kind.at("psb") == 1);
  CHECK(census->packets_by_kind.at("tnt.8") == 1);
  CHECK(census->packets_by_kind.at("tip") == 1);
  CHECK(census->packets_by_kind.at("tip.pgd") == 1);
  CHECK(census->packets_by_kind.at("mode.exec") == 1);
  CHECK(census->has_tsc);
  CHECK(census->first_tsc == 0x5000);
  CHECK(census->errors.empty());
  CHECK(census->skipped_bytes == 0);
}

TEST_CASE("damage is recorded and counting resumes at the next PSB") {
  auto one = SmallTrace();
  std::vector<uint8_t> trace(8, 0xd9);  // garbage before the first PSB
  trace.insert(trace.end(), one.begin(), one.end());
  // An undefined extended opcode (02 ff) between the copies: the damage.
  trace.insert(trace.end(), {0x02, 0xff, 0xff});
  size_t second = trace.size();
  trace.insert(trace.end(), one.begin(), one.end());
  auto census = TakeCensus(trace, PtParams{});
  REQUIRE(census);
  CHECK(census->psb_offsets.size() == 2);
  CHECK(census->psb_offsets.back() == second);
  CHECK(census->errors.size() == 1);
  CHECK(census->skipped_bytes >= 8);
  CHECK(census->packets_by_kind.at("psb") == 2);  // counted on both sides of the damage
  CHECK(census->packets_by_kind.at("tnt.8") == 2);
  CHECK(!TakeCensus({}, PtParams{}));
}

TEST_CASE("MODE packets are counted by their leaf") {
  auto trace = SmallTrace();
  trace.insert(trace.end(), {0x99, 0x21, 0x99, 0x20, 0x99, 0x01});  // MODE.TSX x2, MODE.Exec
  auto census = TakeCensus(trace, PtParams{});
  REQUIRE(census);
  CHECK(census->packets_by_kind.at("mode.tsx") == 2);
  CHECK(census->packets_by_kind.at("mode.exec") == 2);
  uint64_t by_kind = 0;
  for (const auto& [name, count] : census->packets_by_kind) by_kind += count;
  CHECK(by_kind == census->packets);
}
