#include "decoders/pt/ptxed_options.h"

#include <catch2/catch.hpp>

using namespace ptprof;
using namespace ptprof::pt;

namespace {
tl::expected<PtxedRequest, PtxedParseError> Parse(std::vector<std::string> args) {
  return ParsePtxedArgs(args);
}
}  // namespace

TEST_CASE("ptxed options are read in order, images keep their order") {
  auto r = Parse({"--no-inst", "--check", "--raw", "a.bin:0x1000", "--elf", "b.elf:0x2000",
                  "--cpu", "6/92", "--pt", "t.pt:16-32", "--raw", "c.bin:0x4-0x8:0x3000"});
  REQUIRE(r);
  CHECK(r->no_inst);
  CHECK(r->check);
  REQUIRE(r->images.size() == 3);
  CHECK_FALSE(r->images[0].elf);
  CHECK(r->images[0].raw.address == 0x1000);
  CHECK(r->images[1].elf);
  CHECK(r->images[1].elf_spec.base == 0x2000);
  CHECK(r->images[2].raw.size == 4);
  REQUIRE(r->params.cpu);
  CHECK(r->params.cpu->model == 92);
  CHECK(r->pt.file == "t.pt");
  CHECK(r->pt.offset == 16);
}

TEST_CASE("the configuration is fixed when --pt is read") {
  auto r = Parse({"--nom-freq", "4", "--event:tick", "--pt", "t.pt", "--mtc-freq", "3",
                  "--block:end-on-call"});
  REQUIRE(r);
  CHECK(r->params.nom_freq == 4);
  CHECK(r->flow.tick_events);
  CHECK(r->params.mtc_freq == 0);     // too late: no effect, as in ptxed
  CHECK_FALSE(r->flow.end_on_call);
  auto late_cpu = Parse({"--pt", "t.pt", "--cpu", "6/92"});
  REQUIRE_FALSE(late_cpu);
  CHECK(late_cpu.error().usage);
  CHECK_FALSE(Parse({"--pt", "t.pt", "--insn-decoder"}));
  CHECK_FALSE(Parse({"--pt", "t.pt", "--filter:addr0_cfg", "1"}));
  CHECK_FALSE(Parse({"--pt", "a.pt", "--pt", "b.pt"}));
}

TEST_CASE("address filters and statistics") {
  auto r = Parse({"--filter:addr0_cfg", "0x1", "--filter:addr0_a", "0x1000",
                  "--filter:addr3_b", "0x2000", "--stat", "--pt", "t.pt"});
  REQUIRE(r);
  CHECK(r->params.filter[0].cfg == 1);
  CHECK(r->params.filter[0].a == 0x1000);
  CHECK(r->params.filter[3].b == 0x2000);
  CHECK(r->stat_insn);
  CHECK(r->stat_blocks);  // all statistics of the block decoder when none is named
  auto insn = Parse({"--insn-decoder", "--stat", "--pt", "t.pt"});
  REQUIRE(insn);
  CHECK(insn->stat_insn);
  CHECK_FALSE(insn->stat_blocks);
  auto only = Parse({"--stat:blocks", "--pt", "t.pt"});
  REQUIRE(only);
  CHECK(only->stats);
  CHECK_FALSE(only->stat_insn);
  CHECK_FALSE(Parse({"--filter:addr0_cfg", "16", "--pt", "t.pt"}));
  CHECK_FALSE(Parse({"--filter:addr4_a", "1", "--pt", "t.pt"}));
}

TEST_CASE("usage errors: unknown options, missing values, sideband") {
  CHECK_FALSE(Parse({"--bogus", "--pt", "t.pt"}));
  CHECK_FALSE(Parse({"--raw", "--pt", "t.pt"}));
  CHECK_FALSE(Parse({"--mtc-freq", "256", "--pt", "t.pt"}));
  CHECK_FALSE(Parse({"--raw", "a.bin"}));
  CHECK_FALSE(Parse({"--raw", "a.bin:0x1000"}));  // no --pt
  auto bad_mult = Parse({"--pevent:time-mult", "0", "--pevent:primary", "x.sb", "--pt", "t.pt"});
  REQUIRE_FALSE(bad_mult);
  CHECK(bad_mult.error().usage);
  CHECK(bad_mult.error().message.find("--pevent:time-mult") == 0);
  CHECK_FALSE(Parse({"--pevent", "x.sb", "--pt", "t.pt"}));  // ptxed names the file's role
  CHECK_FALSE(Parse({"--sb:bogus", "--pt", "t.pt"}));
  auto help = Parse({"--help"});
  REQUIRE(help);
  CHECK(help->help);
  CHECK(PtxedHelp().find("--block:show-blocks") != std::string::npos);
}

TEST_CASE("--cpu takes C notation like ptxed") {
  auto hex = Parse({"--cpu", "0x6/0x55/4", "--pt", "t.pt"});
  REQUIRE(hex);
  REQUIRE(hex->params.cpu);
  CHECK(hex->params.cpu->family == 6);
  CHECK(hex->params.cpu->model == 85);
  CHECK(hex->params.cpu->stepping == 4);
  auto none = Parse({"--cpu", "none", "--pt", "t.pt"});
  REQUIRE(none);
  CHECK_FALSE(none->params.cpu);
  CHECK_FALSE(Parse({"--cpu", "6", "--pt", "t.pt"}));
  CHECK_FALSE(Parse({"--cpu", "6/256", "--pt", "t.pt"}));
  CHECK(Parse({"--cpu", "6/85/", "--pt", "t.pt"}));  // libipt takes an empty stepping as 0
  CHECK_FALSE(Parse({"--cpu", "6/85/4/1", "--pt", "t.pt"}));
}

TEST_CASE("sideband options: files take the --pevent values before them, --sb the display") {
  auto r = Parse({"--sb:compact", "--sb:offset", "--sb:switch", "--pevent:sample-type", "0x6", "--pevent:primary",
                  "p.sb", "--pt", "t.pt", "--pevent:secondary", "s.sb:0x10"});
  REQUIRE(r);
  REQUIRE(r->sideband.files.size() == 2);
  CHECK(r->sideband.files[0].range.file == "p.sb");
  CHECK(r->sideband.files[0].config.sample_type == 6);
  CHECK_FALSE(r->sideband.files[1].primary);
  CHECK(r->sideband.files[1].range.offset == 0x10);
  CHECK(r->sideband.print.compact);
  CHECK(r->sideband.print.offset);
  CHECK(r->sideband.print_switch);
  CHECK(PtxedHelp().find("--pevent:primary") != std::string::npos);
}
