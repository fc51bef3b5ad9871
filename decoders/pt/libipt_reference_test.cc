#include "decoders/pt/libipt_reference.h"

#include <cstdlib>
#include <string>

#include <catch2/catch.hpp>

#include "sideband/file_bytes.h"

using namespace ptprof;
using namespace ptprof::pt;

// The stored sample trace (traces/sample) is the fixture: its instruction count is known from
// single-stepping the program (traces/sample/sample.ips has one line per instruction).
TEST_CASE("libipt driven directly counts the sample trace's instructions") {
  const char* root = std::getenv("SOURCE_ROOT");
  REQUIRE(root);
  std::string dir = std::string(root) + "/traces/sample/";
  auto trace = ReadFileBytes(dir + "sample.pt");
  REQUIRE(trace);
  auto ips = ReadFileBytes(dir + "sample.ips");
  REQUIRE(ips);
  uint64_t expected = static_cast<uint64_t>(std::count(ips->begin(), ips->end(), '\n'));

  ImageSet images;
  ElfImageSpec elf;
  elf.file = dir + "sample";
  REQUIRE(images.AddElf(elf));
  for (bool insn_decoder : {false, true}) {
    auto count = RunLibiptDirectly(*trace, images, PtParams{}, insn_decoder);
    REQUIRE(count);
    CHECK(count->insns == expected);
    CHECK(count->errors == 0);
    CHECK(count->events > 0);
    if (!insn_decoder) CHECK(count->blocks > 0);
  }
}

TEST_CASE("damaged data is counted as errors, not fatal") {
  const char* root = std::getenv("SOURCE_ROOT");
  REQUIRE(root);
  std::string dir = std::string(root) + "/traces/sample/";
  auto trace = ReadFileBytes(dir + "sample.pt");
  REQUIRE(trace);
  // Overwrite bytes in the middle with an invalid opcode sequence; the later PSBs still decode.
  for (size_t i = 60; i < 70 && i < trace->size(); ++i) (*trace)[i] = 0xd9;
  ImageSet images;
  ElfImageSpec elf;
  elf.file = dir + "sample";
  REQUIRE(images.AddElf(elf));
  auto count = RunLibiptDirectly(*trace, images, PtParams{}, false);
  REQUIRE(count);
  CHECK(count->errors >= 1);
  CHECK(count->insns > 0);
  CHECK(!RunLibiptDirectly({}, images, PtParams{}, false));
}
