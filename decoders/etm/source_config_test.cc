#include "decoders/etm/source_config.h"

#include <catch2/catch.hpp>

using namespace ptprof::etm;

namespace {

Snapshot OneSource(const std::string& type, std::vector<RegisterLine> regs,
                   const std::string& core_type = "Cortex-A57") {
  Snapshot s;
  s.dir = "snap";
  SnapshotDevice core;
  core.name = "cpu_3";
  core.type = core_type;
  core.ini_file = "snap/cpu_3.ini";
  SnapshotDevice src;
  src.name = "ETM_3";
  src.type = type;
  src.ini_file = "snap/etm.ini";
  src.registers = std::move(regs);
  s.devices = {core, src};
  s.buffers = {TraceBuffer{"ETB_0", "snap/trace.bin", "coresight", "trace.ini:[buffer0]"}};
  s.source_buffers = {{"ETM_3", "ETB_0"}};
  s.core_sources = {{"cpu_3", "ETM_3"}};
  return s;
}

std::vector<RegisterLine> Etm4Regs() {
  return {{"TRCCONFIGR", "0x0", "etm.ini:6"}, {"TRCTRACEIDR", "0x12", "etm.ini:7"},
          {"TRCIDR0", "0x28000EA1", "etm.ini:8"}, {"TRCIDR2", "0x488", "etm.ini:9"}};
}

}  // namespace

TEST_CASE("core names give architecture and profile") {
  CHECK(ArchProfileOf("Cortex-A53").arch == ArchVersion::kV8);
  CHECK(ArchProfileOf("Cortex-A55").arch == ArchVersion::kV8r3);
  CHECK(ArchProfileOf("Cortex-A15").arch == ArchVersion::kV7);
  CHECK(ArchProfileOf("ARM-AA64").arch == ArchVersion::kAA64);
  CHECK(ArchProfileOf("ARMv8.2-A").arch == ArchVersion::kV8);
  CHECK(ArchProfileOf("ARMv8.4-A").arch == ArchVersion::kAA64);
  CHECK(ArchProfileOf("ARMv7-R").profile == CoreProfile::kR);
  CHECK(ArchProfileOf("Pentium").arch == ArchVersion::kUnknown);
}

TEST_CASE("an ETMv4 source gets its registers, defaults, trace ID and cpu") {
  auto cfg = ConfigureSource(OneSource("ETM4.1", Etm4Regs()), "ETM_3");
  REQUIRE(cfg);
  CHECK(cfg->protocol == Protocol::kEtmV4);
  CHECK(cfg->trace_id == 0x12);
  CHECK(cfg->cpu == 3);
  CHECK(cfg->Reg("TRCIDR1") == 0x4100F403u);  // absent: the documented default
  CHECK(cfg->arch.arch == ArchVersion::kV8);
}

TEST_CASE("source configuration errors name file, line and register") {
  auto regs = Etm4Regs();
  regs[2].text = "0xZZ";
  auto bad = ConfigureSource(OneSource("ETM4", regs), "ETM_3");
  REQUIRE(!bad);
  CHECK(bad.error().message == "etm.ini:8: TRCIDR0: '0xZZ' is not a number");
  regs = Etm4Regs();
  regs.erase(regs.begin());
  auto missing = ConfigureSource(OneSource("ETM4", regs), "ETM_3");
  REQUIRE(!missing);
  CHECK(missing.error().message == "snap/etm.ini: [regs] has no TRCCONFIGR register (needed for ETMv4)");
  auto core = ConfigureSource(OneSource("ETM4", Etm4Regs(), "Pentium"), "ETM_3");
  REQUIRE(!core);
  CHECK(core.error().message.find("unknown core type 'Pentium'") != std::string::npos);
  auto protocol = ConfigureSource(OneSource("XYZ1.0", Etm4Regs()), "ETM_3");
  REQUIRE(!protocol);
  CHECK(protocol.error().message.find("'XYZ1.0' is not a trace protocol") != std::string::npos);
}

TEST_CASE("a buffer plan lists the sources of the first buffer") {
  auto plan = PlanBuffer(OneSource("ETM4", Etm4Regs()), "");
  REQUIRE(plan);
  REQUIRE(plan->sources.size() == 1);
  CHECK(plan->sources[0].source == "ETM_3");
  auto unknown = PlanBuffer(OneSource("ETM4", Etm4Regs()), "ETB_9");
  REQUIRE(!unknown);
  CHECK(unknown.error().message.find("no trace buffer named 'ETB_9' (there are: ETB_0)") !=
        std::string::npos);
}
