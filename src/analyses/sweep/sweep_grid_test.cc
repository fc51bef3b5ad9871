#include "src/analyses/sweep/sweep_grid.h"

#include <catch2/catch.hpp>

using namespace ptprof::sweep;

TEST_CASE("value lists: powers of two, plain ranges, single values") {
  auto powers = ParseValueList("2^8..2^12", "--psb-period", 1, 1u << 30);
  REQUIRE(powers);
  CHECK(*powers == std::vector<uint64_t>{256, 512, 1024, 2048, 4096});
  auto plain = ParseValueList("0..3, 7", "--mtc-period", 0, 15);
  REQUIRE(plain);
  CHECK(*plain == std::vector<uint64_t>{0, 1, 2, 3, 7});
  auto mixed = ParseValueList("256,1024,256", "--psb-period", 1, 1u << 30);
  REQUIRE(mixed);
  CHECK(*mixed == std::vector<uint64_t>{256, 1024});  // duplicates once
}

TEST_CASE("value lists: errors name the option and the text") {
  auto empty = ParseValueList("", "--psb-period", 1, 100);
  REQUIRE(!empty);
  CHECK(empty.error().message == "--psb-period: the list is empty");
  auto word = ParseValueList("12,abc", "--psb-period", 1, 100);
  REQUIRE(!word);
  CHECK(word.error().message.find("'abc'") != std::string::npos);
  auto backwards = ParseValueList("2^5..2^3", "--psb-period", 1, 100);
  REQUIRE(!backwards);
  CHECK(backwards.error().message.find("backwards") != std::string::npos);
  auto range = ParseValueList("16", "--mtc-period", 0, 15);
  REQUIRE(!range);
  CHECK(range.error().message == "--mtc-period: 16 is outside 0..15");
  CHECK(!ParseValueList("1,,2", "--x", 0, 9));
}

TEST_CASE("optional lists take off; on/off lists") {
  auto mtc = ParseOptionalList("off,0..2", "--mtc-period", 0, 15);
  REQUIRE(mtc);
  REQUIRE(mtc->size() == 4);
  CHECK(!(*mtc)[0].has_value());
  CHECK((*mtc)[3] == std::optional<uint8_t>(2));
  auto tsc = ParseOnOffList("on,off", "--tsc");
  REQUIRE(tsc);
  CHECK(*tsc == std::vector<bool>{true, false});
  CHECK(!ParseOnOffList("yes", "--tsc"));
}

TEST_CASE("product grid spans every combination") {
  GridLists lists;
  lists.psb = {256, 4096};
  lists.cyc = {std::nullopt, 3};
  auto grid = BuildGrid(lists, GridMode::kProduct);
  REQUIRE(grid.size() == 4);
  CHECK(grid[0].config.Label() == "psb=256,mtc=off,cyc=off,tsc=on");
  CHECK(grid[3].config.Label() == "psb=4096,mtc=off,cyc=3,tsc=on");
  lists.tsc = {};
  CHECK(BuildGrid(lists, GridMode::kProduct).empty());
}

TEST_CASE("axes grid varies one parameter at a time from the baseline") {
  GridLists lists;
  lists.psb = {256, 1024, 4096};
  lists.mtc = {std::nullopt, 3};
  auto grid = BuildGrid(lists, GridMode::kAxes);
  // psb axis: 3 points (mtc off); mtc axis: off is psb=4096,mtc=off (already there) and mtc=3.
  REQUIRE(grid.size() == 4);
  CHECK(grid[0].axis == SweepAxis::kPsb);
  CHECK(grid[3].axis == SweepAxis::kMtc);
  CHECK(grid[3].config.Label() == "psb=4096,mtc=3,cyc=off,tsc=on");
  GridLists single;
  single.psb = {512};
  auto one = BuildGrid(single, GridMode::kAxes);
  REQUIRE(one.size() == 1);
  CHECK(one[0].config.psb_period == 512);
  CHECK(BaselineOf(single).psb_period == 512);
}

TEST_CASE("record arguments of a configuration") {
  PacketConfig c;
  c.psb_period = 1024;
  c.cyc_threshold = 2;
  c.tsc = false;
  CHECK(c.RecordArgs() ==
        std::vector<std::string>{"--psb-period", "1024", "--cyc-threshold", "2", "--no-tsc"});
}
