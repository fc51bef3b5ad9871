#include "decoders/etm/snapshot.h"

#include <cstdio>
#include <filesystem>
#include <fstream>

#include <catch2/catch.hpp>

using namespace ptprof::etm;
namespace fs = std::filesystem;

namespace {

// A small snapshot written by the test: one A53 with a dump, one ETMv4 source, one buffer.
struct TempSnapshot {
  fs::path dir;
  TempSnapshot() {
    char tmpl[] = "/tmp/ptprof-snapshot-XXXXXX";
    dir = mkdtemp(tmpl);
    Write("snapshot.ini", "[snapshot]\nversion=1.0\n[device_list]\ndevice0=cpu_0.ini\ndevice1=etm.ini\n"
                          "[trace]\nmetadata=trace.ini\n");
    Write("cpu_0.ini", "[device]\nname=cpu_0\nclass=core\ntype=Cortex-A53\n[dump1]\nfile=code.bin\n"
                       "address=0x1000\nlength=0x8\n");
    Write("etm.ini", "[device]\nname=ETM_0\nclass=trace_source\ntype=ETM4\n[regs]\n"
                     "TRCCONFIGR(0x004)=0x0\nTRCTRACEIDR(0x010)=0x10\nTRCIDR0(0x078)=0x28000EA1\n"
                     "TRCIDR2(0x07A)=0x00000488\n");
    Write("trace.ini", "[trace_buffers]\nbuffers=buffer0\n[buffer0]\nname=ETB_0\nfile=trace.bin\n"
                       "format=coresight\n[source_buffers]\nETM_0=ETB_0\n[core_trace_sources]\n"
                       "cpu_0=ETM_0\n");
    Write("code.bin", std::string(8, '\0'));
    Write("trace.bin", std::string(16, '\0'));
  }
  ~TempSnapshot() { fs::remove_all(dir); }
  void Write(const std::string& name, const std::string& text) {
    std::ofstream(dir / name, std::ios::binary) << text;
  }
};

}  // namespace

TEST_CASE("a snapshot directory is read with devices, dumps, buffers and associations") {
  TempSnapshot t;
  auto snap = LoadSnapshot(t.dir.string());
  REQUIRE(snap);
  REQUIRE(snap->devices.size() == 2);
  const SnapshotDevice* core = snap->Device("cpu_0");
  REQUIRE(core);
  REQUIRE(core->dumps.size() == 1);
  CHECK(core->dumps[0].address == 0x1000);
  CHECK(core->dumps[0].length == 8u);
  const SnapshotDevice* etm = snap->Device("ETM_0");
  REQUIRE(etm);
  REQUIRE(etm->Register("trcidr0"));
  CHECK(etm->Register("TRCIDR0")->text == "0x28000EA1");
  CHECK(etm->Register("TRCIDR0")->where.find("etm.ini:8") != std::string::npos);
  REQUIRE(snap->buffers.size() == 1);
  CHECK(snap->buffers[0].format == "coresight");
  CHECK(snap->CoreOf("ETM_0") == "cpu_0");
  CHECK(snap->SourcesOf("ETB_0") == std::vector<std::string>{"ETM_0"});
}

TEST_CASE("snapshot errors name the file, line and key") {
  TempSnapshot t;
  SECTION("missing trace buffer file") {
    fs::remove(t.dir / "trace.bin");
    auto snap = LoadSnapshot(t.dir.string());
    REQUIRE(!snap);
    CHECK(snap.error().message.find("trace.ini:5: file: trace buffer file") != std::string::npos);
  }
  SECTION("missing device file") {
    fs::remove(t.dir / "etm.ini");
    auto snap = LoadSnapshot(t.dir.string());
    REQUIRE(!snap);
    CHECK(snap.error().message.find("snapshot.ini:5: device1: device file") != std::string::npos);
  }
  SECTION("bad dump address") {
    t.Write("cpu_0.ini", "[device]\nname=cpu_0\ntype=Cortex-A53\n[dump1]\nfile=code.bin\naddress=zz\n");
    auto snap = LoadSnapshot(t.dir.string());
    REQUIRE(!snap);
    CHECK(snap.error().message.find("cpu_0.ini:6: address: 'zz' is not a number") != std::string::npos);
  }
  SECTION("unknown buffer format") {
    t.Write("trace.ini", "[trace_buffers]\nbuffers=buffer0\n[buffer0]\nname=ETB_0\nfile=trace.bin\n"
                         "format=weird\n[source_buffers]\nETM_0=ETB_0\n");
    auto snap = LoadSnapshot(t.dir.string());
    REQUIRE(!snap);
    CHECK(snap.error().message.find("trace.ini:6: format: unknown trace buffer format 'weird'") !=
          std::string::npos);
  }
  SECTION("no device_list") {
    t.Write("snapshot.ini", "[snapshot]\nversion=1.0\n");
    auto snap = LoadSnapshot(t.dir.string());
    REQUIRE(!snap);
    CHECK(snap.error().message.find("snapshot.ini: no [device_list] section") != std::string::npos);
  }
}
