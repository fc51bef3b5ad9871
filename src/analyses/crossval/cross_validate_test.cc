#include "src/analyses/crossval/cross_validate.h"

#include <catch2/catch.hpp>

#include <cstdio>
#include <unistd.h>

#include "sideband/image_testing.h"

using namespace ptprof;

namespace {

// The program "prog" at file offset 0:
//   0: nop; 1: nop; 2: je 6; 4: nop; 5: nop; 6: jmp 0; 8: ret
const std::vector<uint8_t> kCode = {0x90, 0x90, 0x74, 0x02, 0x90, 0x90, 0xeb, 0xf8, 0xc3};

std::string WriteCode() { return testing::WriteTempFile(kCode); }

BranchSample Burst(uint64_t index, std::vector<std::pair<uint64_t, uint64_t>> branches) {
  BranchSample s;
  s.sample = index;
  s.pid = 2;
  for (auto [from, to] : branches) s.branches.push_back({from, to});
  return s;
}

}  // namespace

TEST_CASE("bursts of another run at another base: in the flow, feasible only, inconsistent, unmapped") {
  const std::string file = WriteCode();
  AddressNormaliser a, b;
  a.AddMapping(1, 0x1000, kCode.size(), 0, "/usr/bin/prog");  // A runs it at 0x1000
  b.AddMapping(2, 0x5000, kCode.size(), 0, "/tmp/x/prog");    // B at 0x5000
  ImageSet b_code;
  REQUIRE(b_code.AddRaw({file, 0, kCode.size(), 0x5000}));
  CrossValidator v({}, a, [](uint64_t) { return std::string("loop+0x0"); });
  std::vector<BranchSample> bursts = {
      Burst(0, {{0x5002, 0x5006}, {0x5006, 0x5000}, {0x5002, 0x5006}}),  // in the flow
      Burst(1, {{0x5006, 0x5000}, {0x5006, 0x5000}, {0x5006, 0x5000}}),  // never twice in A: feasible
      Burst(2, {{0x5006, 0x5000}, {0x5008, 0x5000}}),  // from 0x5000 the jmp at 0x5006 comes first
      Burst(3, {{0x9000, 0x5000}}),                    // outside every file
      Burst(4, {}),
  };
  v.Expect(bursts, b);  // before A's flow
  // A's flow: the loop body twice through the je (taken), then once through the fall-through.
  for (int i = 0; i < 2; ++i) {
    v.flow().AddBranch(1, 1, 0x1002, 0x1006);
    v.flow().AddBranch(1, 1, 0x1006, 0x1000);
  }
  v.flow().AddBranch(1, 1, 0x1006, 0x1000);
  v.flow().AddBreak(1);
  CrossValidation r = v.Validate(b_code);
  unlink(file.c_str());
  CHECK(r.flow_branches == 5);
  CHECK(r.bursts == 5);
  CHECK(r.empty == 1);
  CHECK(r.unmapped == 1);
  CHECK(r.bursts_mapped == 3);
  CHECK(r.in_flow == 1);
  CHECK(r.feasible == 1);
  CHECK(r.inconsistent == 1);
  REQUIRE(r.counterexamples.size() == 1);
  CHECK(r.counterexamples[0].sample == 2);
  CHECK(r.counterexamples[0].record == 0);
  CHECK(r.counterexamples[0].next_from == 0x5008);
  CHECK(r.counterexamples[0].reason.find("jmp at 0x5006") != std::string::npos);
  // Edges: A {2->6: 2, 6->0: 3}; B {2->6: 2, 6->0: 5, 8->0: 1}: overlap min(2/5,2/8)+min(3/5,5/8).
  CHECK(r.edge_overlap == Approx(100.0 * (2.0 / 8 + 3.0 / 5)));
  CHECK(r.images_a == std::vector<std::string>{"prog"});
}

TEST_CASE("profile overlap is 100% for proportional profiles and 0% for disjoint ones") {
  std::map<uint32_t, uint64_t> a = {{1, 10}, {2, 30}}, b = {{1, 1}, {2, 3}}, c = {{3, 5}};
  CHECK(ProfileOverlap(a, b) == Approx(100));
  CHECK(ProfileOverlap(a, c) == Approx(0));
  CHECK(ProfileOverlap(a, {}) == 0);
}

TEST_CASE("FunctionOf drops only the offset Describe puts after a name") {
  CHECK(FunctionOf("main+0x13") == "main");
  CHECK(FunctionOf("main") == "main");
  CHECK(FunctionOf("") == "?");
  // A C++ name shown demangled may hold a '+' of its own.
  CHECK(FunctionOf("Big::operator+(Big const&)") == "Big::operator+(Big const&)");
  CHECK(FunctionOf("Big::operator+(Big const&)+0x1f") == "Big::operator+(Big const&)");
  CHECK(FunctionOf("operator+=(int)") == "operator+=(int)");
}
