#include "decoders/pt/pevent_options.h"

#include <catch2/catch.hpp>

using namespace ptprof::pt;

namespace {

// Parses all of `args` as sideband options; returns the first error message (empty if none).
std::string ParseAll(const std::vector<std::string>& args, SidebandTool tool, SidebandRequest& request) {
  for (size_t i = 0; i < args.size(); ++i) {
    auto handled = ParseSidebandOption(args, i, tool, request);
    if (!handled) return handled.error().message;
    if (!*handled) return "not a sideband option: " + args[i];
  }
  return "";
}

}  // namespace

TEST_CASE("a sideband file takes the --pevent options given before it") {
  SidebandRequest r;
  REQUIRE(ParseAll({"--pevent:sample-type", "0x6", "--pevent:time-mult", "3", "--pevent:primary", "a.sb:0x10-0x40",
                    "--pevent:time-zero", "5", "--pevent:secondary", "b.sb"},
                   SidebandTool::kPtxed, r) == "");
  REQUIRE(r.files.size() == 2);
  CHECK(r.files[0].range.file == "a.sb");
  CHECK(r.files[0].range.offset == 0x10);
  CHECK(r.files[0].range.size == 0x30);
  CHECK(r.files[0].primary);
  CHECK(r.files[0].config.sample_type == 6);
  CHECK(r.files[0].config.clock.time_mult == 3);
  CHECK(r.files[0].config.clock.time_zero == 0);
  CHECK_FALSE(r.files[1].primary);
  CHECK(r.files[1].config.clock.time_zero == 5);
  CHECK(r.files[1].config.kernel_start == UINT64_MAX);
}

TEST_CASE("libipt's file names with commas and '=' are file names, not ranges") {
  SidebandRequest r;
  REQUIRE(ParseAll({"--pevent:primary", "t-pevent-primary,sample-type=0x4,time-mult=0x1.sb"}, SidebandTool::kPtdump,
                   r) == "");
  CHECK(r.files[0].range.file == "t-pevent-primary,sample-type=0x4,time-mult=0x1.sb");
  CHECK(r.files[0].range.offset == 0);
}

TEST_CASE("--sb display options: compact and verbose exclude each other") {
  SidebandRequest r;
  REQUIRE(ParseAll({"--sb:verbose", "--sb:offset", "--sb", "--sb:time", "--sb:warn"}, SidebandTool::kPtdump, r) ==
          "");
  CHECK(r.print.compact);
  CHECK_FALSE(r.print.verbose);
  CHECK(r.print.offset);
  CHECK(r.print.time);
  CHECK_FALSE(r.print.filename);
  CHECK(r.warn);
}

TEST_CASE("each tool accepts its own spellings") {
  SidebandRequest r;
  std::vector<std::string> args = {"--pevent", "x.sb"};
  size_t i = 0;
  CHECK_FALSE(*ParseSidebandOption(args, i, SidebandTool::kPtxed, r));  // ptxed has no bare --pevent
  CHECK(*ParseSidebandOption(args, i, SidebandTool::kPtdump, r));
  CHECK(i == 1);
  args = {"--sb:switch"};
  i = 0;
  CHECK_FALSE(*ParseSidebandOption(args, i, SidebandTool::kPtdump, r));
  CHECK(*ParseSidebandOption(args, i, SidebandTool::kPtxed, r));
  CHECK(r.print_switch);
  // ptdump takes the image options and ignores them.
  SidebandRequest d;
  REQUIRE(ParseAll({"--pevent:sysroot", "/root", "--pevent:vdso-x64", "v"}, SidebandTool::kPtdump, d) == "");
  CHECK(d.next.sysroot.empty());
  REQUIRE(ParseAll({"--pevent:sysroot", "/root", "--pevent:kcore", "k:0x10"}, SidebandTool::kPtxed, d) == "");
  CHECK(d.next.sysroot == "/root");
  CHECK(d.kcore == std::vector<std::string>{"k:0x10"});
}

TEST_CASE("bad sideband option values name the option") {
  SidebandRequest r;
  CHECK(ParseAll({"--pevent:time-mult", "0"}, SidebandTool::kPtxed, r).find("--pevent:time-mult") == 0);
  CHECK(ParseAll({"--pevent:time-shift", "64"}, SidebandTool::kPtxed, r).find("--pevent:time-shift") == 0);
  CHECK(ParseAll({"--pevent:sample-type", "many"}, SidebandTool::kPtxed, r).find("--pevent:sample-type") == 0);
  CHECK(ParseAll({"--pevent:primary"}, SidebandTool::kPtxed, r) == "--pevent:primary: missing argument");
  CHECK(ParseAll({"--pevent:primary", "--sb"}, SidebandTool::kPtxed, r) == "--pevent:primary: missing argument");
  CHECK(r.files.empty());
}

TEST_CASE("the help names every sideband option of the tool") {
  CHECK(SidebandHelp(SidebandTool::kPtxed).find("--sb:switch") != std::string::npos);
  CHECK(SidebandHelp(SidebandTool::kPtdump).find("--sb:switch") == std::string::npos);
  CHECK(SidebandHelp(SidebandTool::kPtdump).find("--pevent:tsc-offset") != std::string::npos);
}
