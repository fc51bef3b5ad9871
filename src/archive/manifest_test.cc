#include "src/archive/manifest.h"

#include <catch2/catch.hpp>

using namespace ptprof;
using namespace ptprof::archive;

namespace {
Manifest Example() {
  Manifest m;
  m.tool = "ptprof 0.1.0";
  m.created = "2026-11-22T02:00:00Z";
  m.source = {"raw_pt", {"pt.bin"}, "lab"};
  m.pt.cpu = pt::PtCpu{6, 85, 4};
  m.pt.mtc_freq = 3;
  m.pt.nom_freq = 37;
  m.pt.cpuid_0x15_eax = 2;
  m.pt.cpuid_0x15_ebx = 308;
  m.pt.filter[1] = {1, 0x401000, 0x402000};
  m.pt_config["psb_period"] = 3;
  m.clock = ClockEntry{10, 123456, 999};
  m.streams.push_back({"cpu0", "intel_pt", 0, -1, -1, "streams/cpu0.pt"});
  m.streams.push_back({"tid1234", "intel_pt", -1, 1234, 1234, "streams/tid1234.pt"});
  ImageEntry elf;
  elf.path = "/usr/bin/hello";
  elf.build_id = "46643ff0cf62ee72a7fca059aae56acf3bd7867d";
  elf.base = 0x555555554000;
  elf.size = 9264;
  elf.pid = 1234;
  elf.member = "images/46643ff0/hello";
  m.images.push_back(elf);
  ImageEntry raw;
  raw.kind = ImageEntry::Kind::kRaw;
  raw.path = "dump.bin";
  raw.address = 0x401000;
  raw.file_offset = 0x1000;
  raw.size = 0x27;
  raw.member_offset = 0x1000;
  raw.time_ns = 5000;
  raw.member = "images/raw0/dump.bin";
  m.images.push_back(raw);
  m.sideband.push_back({"kallsyms", "kallsyms", "sideband/kallsyms"});
  m.triggers.push_back({"trigger", "syscall", "cpu0", 0x40, 0x1234, kUnknownTime});
  return m;
}
}  // namespace

TEST_CASE("a manifest round-trips through JSON") {
  const Manifest m = Example();
  const auto json = ManifestToJson(m);
  CHECK(json["pt"]["cpu"]["family"] == 6);
  CHECK(json["images"][0]["base"] == "0x555555554000");
  CHECK(json["images"][1]["address"] == "0x401000");
  auto back = ManifestFromJson(json);
  REQUIRE(back);
  CHECK(ManifestToJson(*back) == json);
  CHECK(back->pt.filter[1].a == 0x401000);
  CHECK(back->images[1].kind == ImageEntry::Kind::kRaw);
  CHECK(back->images[1].member_offset == 0x1000);
  CHECK(back->images[1].time_ns == 5000);
  CHECK(back->images[0].time_ns == kUnknownTime);
  CHECK(back->streams[1].tid == 1234);
  CHECK(back->triggers[0].time_ns == kUnknownTime);
  REQUIRE(back->clock);
  CHECK(back->clock->time_mult == 123456);
}

TEST_CASE("manifest errors name the field") {
  auto json = ManifestToJson(Example());
  auto bad = json;
  bad["streams"][1]["member"] = 7;
  CHECK(ManifestFromJson(bad).error().message == "field 'streams[1].member': expected a string");
  bad = json;
  bad["pt"]["mtc_freq"] = 300;
  CHECK(ManifestFromJson(bad).error().message == "field 'pt.mtc_freq': 300 is more than 255");
  bad = json;
  bad["images"][0]["kind"] = "pe";
  CHECK(ManifestFromJson(bad).error().message ==
        "field 'images[0].kind': 'pe' is neither 'elf' nor 'raw'");
  bad = json;
  bad["images"][1]["address"] = "nonsense";
  CHECK(ManifestFromJson(bad).error().message ==
        "field 'images[1].address': expected a number or a 0x hex string");
  bad = json;
  bad["streams"][1]["name"] = "cpu0";
  CHECK(ManifestFromJson(bad).error().message == "field 'streams[1].name': 'cpu0' appears twice");
  bad = json;
  bad["pt"]["addr_filters"][0]["n"] = 4;
  CHECK(ManifestFromJson(bad).error().message == "field 'pt.addr_filters[0].n': 4 is more than 3");
  CHECK_FALSE(ManifestFromJson(nlohmann::ordered_json::array()));
}

TEST_CASE("unknown fields are ignored; missing lists are empty") {
  nlohmann::ordered_json json = {{"future_field", 1}, {"tool", "x"}};
  auto m = ManifestFromJson(json);
  REQUIRE(m);
  CHECK(m->streams.empty());
  CHECK(m->tool == "x");
}

TEST_CASE("every member the manifest names must exist") {
  const Manifest m = Example();
  std::vector<MemberInfo> members;
  for (const char* name : {"streams/cpu0.pt", "streams/tid1234.pt", "images/46643ff0/hello",
                           "images/raw0/dump.bin", "sideband/kallsyms"})
    members.push_back(MemberInfo{name});
  CHECK(CheckMembersExist(m, members));
  members.pop_back();
  CHECK(CheckMembersExist(m, members).error().message ==
        "field 'sideband[0].member': member 'sideband/kallsyms' is not in the archive");
}
