#include "decoders/pt/pevent_contexts.h"

#include <catch2/catch.hpp>

#include "decoders/pt/flow_testing.h"
#include "decoders/pt/image_cache.h"

using namespace ptprof;
using namespace ptprof::pt;
using namespace ptprof::pt::testing;

namespace {

std::vector<uint8_t> ElfIdent(uint8_t elf_class, uint16_t machine) {
  std::vector<uint8_t> bytes(64, 0);
  bytes[0] = 0x7f, bytes[1] = 'E', bytes[2] = 'L', bytes[3] = 'F';
  bytes[4] = elf_class;
  bytes[5] = 1;  // little-endian
  bytes[6] = 1;  // EV_CURRENT
  bytes[18] = static_cast<uint8_t>(machine);
  bytes[19] = static_cast<uint8_t>(machine >> 8);
  return bytes;
}

}  // namespace

TEST_CASE("a process's ABI comes from the ELF header of what it maps") {
  TempFile x64(ElfIdent(2, 62)), x32(ElfIdent(1, 62)), ia32(ElfIdent(1, 3)), raw({0x90, 0x90});
  CHECK(ElfAbi(x64.path()) == PeventAbi::kX64);
  CHECK(ElfAbi(x32.path()) == PeventAbi::kX32);
  CHECK(ElfAbi(ia32.path()) == PeventAbi::kIa32);
  CHECK(ElfAbi(raw.path()) == PeventAbi::kUnknown);
  CHECK(ElfAbi("/nonexistent/file") == PeventAbi::kUnknown);
}

TEST_CASE("each process has its own image, named after its pid, over the shared section cache") {
  TempFile code({0x90, 0x90, 0xc3, 0xf4});
  PtImageCache cache;
  PeventContexts contexts(cache.iscache());
  ImageSection kernel{code.path(), 0, 4, 0xffff0000, {}};
  REQUIRE(contexts.AddKernelSection(kernel));
  CHECK(contexts.Find(0x1a) == nullptr);
  int error = 0;
  auto first = contexts.Get(0x1a, error);
  REQUIRE(first);
  CHECK(error == 0);
  CHECK(std::string(pt_image_name(first->image)) == "pid-1a");
  CHECK(contexts.Get(0x1a, error) == first);
  REQUIRE(contexts.Map(*first, code.path(), 1, 2, 0x1000) >= 0);
  CHECK(contexts.Map(*first, "/nonexistent/code.bin", 0, 2, 0x3000) < 0);
  // The image holds the kernel section and the mapping (both removable by file name: 2 sections).
  CHECK(pt_image_remove_by_filename(first->image, code.path().c_str(), nullptr) == 2);
  // A removed process gets a fresh context; the old one lives on while it is used.
  contexts.Remove(0x1a);
  CHECK(contexts.Find(0x1a) == nullptr);
  auto second = contexts.Get(0x1a, error);
  REQUIRE(second);
  CHECK(second != first);
  CHECK(pt_image_remove_by_filename(second->image, code.path().c_str(), nullptr) == 1);  // kernel only
}
