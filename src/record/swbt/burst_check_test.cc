// CheckBursts on a fake mapped file: consistent bursts pass, each kind of inconsistency is found.
#include "src/record/swbt/burst_check.h"

#include <catch2/catch.hpp>

namespace ptprof::swbt {
namespace {

// /bin/fake mapped at 0x1000 (file offset 0):
//   0x1000: test eax, eax   85 c0
//   0x1002: je 0x1008       74 04
//   0x1004: call 0x1010     e8 07 00 00 00
//   0x1009: nop; 0x100a..: nops
//   0x1010: ret             c3
const std::vector<uint8_t> kCode = {0x85, 0xc0, 0x74, 0x04, 0xe8, 0x07, 0x00, 0x00, 0x00, 0x90,
                                    0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0xc3, 0x90, 0x90, 0x90,
                                    0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90};

std::vector<uint8_t> ReadFake(const std::string& path, uint64_t offset, size_t size) {
  if (path != "/bin/fake" || offset >= kCode.size()) return {};
  const size_t n = std::min(size, kCode.size() - offset);
  return std::vector<uint8_t>(kCode.begin() + offset, kCode.begin() + offset + n);
}

SwbtBurst Burst(uint64_t start, std::vector<std::pair<uint64_t, uint64_t>> branches) {
  SwbtBurst b;
  b.start_pc = start;
  for (auto [from, to] : branches) {
    BranchRecord r;
    r.from = from;
    r.to = to;
    b.sample.branches.push_back(r);
  }
  return b;
}

TEST_CASE("swbt: burst check accepts real paths and names the bad branch") {
  const auto maps = ParseProcMaps("1000-2000 r-xp 00000000 08:01 1 /bin/fake\n"
                                  "3000-4000 r-xp 00000000 00:00 0 [vdso]\n");
  BurstCheckSummary ok;
  // je not taken (falls through), call taken, ret back to 0x1009.
  CheckBursts({Burst(0x1000, {{0x1004, 0x1010}, {0x1010, 0x1009}})}, maps, ReadFake, ok);
  CHECK(ok.bursts == 1);
  CHECK(ok.verified == 2);
  CHECK(ok.bad == 0);

  BurstCheckSummary bad;
  CheckBursts({Burst(0x1000, {{0x1002, 0x1006}}),    // je goes to 0x1008, not 0x1006
               Burst(0x1000, {{0x1009, 0x1010}}),    // a nop is no branch
               Burst(0x1000, {{0x1010, 0x1004}}),    // the call at 0x1004 is in the way
               Burst(0x1000, {{0x3000, 0x1000}})},   // [vdso]: cannot be checked
              maps, ReadFake, bad);
  CHECK(bad.bad == 3);
  CHECK(bad.unverifiable == 1);
  REQUIRE(bad.counterexamples.size() == 3);
  CHECK(bad.counterexamples[0].find("0x1008") != std::string::npos);
  CHECK(bad.counterexamples[1].find("not a branch") != std::string::npos);
  CHECK(bad.counterexamples[2].find("straight-line") != std::string::npos);
}

}  // namespace
}  // namespace ptprof::swbt
