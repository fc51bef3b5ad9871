#include "src/analyses/patterns/pattern_library.h"

#include <catch2/catch.hpp>

using namespace ptprof;
using namespace ptprof::patterns;

TEST_CASE("the library holds the built-ins and the user's definitions") {
  PatternLibrary library;
  auto cli = library.Find("superCLI");
  REQUIRE(cli);
  CHECK(cli->alternatives.size() == 2);
  REQUIRE(library.Define("open = pause"));
  auto open = library.Find("open");
  REQUIRE(open);
  CHECK(open->alternatives[0].steps[0].element.mnemonic == "pause");
  // A definition replaces a built-in of the same name.
  REQUIRE(library.Define("superSTI=sti"));
  CHECK(library.Find("superSTI")->alternatives.size() == 1);
}

TEST_CASE("unknown names and malformed definitions are errors that say what to do") {
  PatternLibrary library;
  auto missing = library.Find("superCL");
  REQUIRE_FALSE(missing);
  CHECK(missing.error().message.find("unknown pattern name 'superCL'") == 0);
  CHECK(missing.error().message.find("superCLI") != std::string::npos);
  CHECK(missing.error().message.find("--pattern superCL=DEFINITION") != std::string::npos);

  auto no_eq = library.Define("cli");
  REQUIRE_FALSE(no_eq);
  CHECK(no_eq.error().message == "--pattern 'cli': expected NAME=DEFINITION");
  auto bad_name = library.Define("9x=cli");
  REQUIRE_FALSE(bad_name);
  auto bad_def = library.Define("x=cli ;");
  REQUIRE_FALSE(bad_def);
  CHECK(bad_def.error().message == "pattern x: column 6: expected an instruction (a mnemonic or bytes:...)");
}
