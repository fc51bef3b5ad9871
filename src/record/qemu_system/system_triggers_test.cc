#include "src/record/qemu_system/system_triggers.h"

#include <catch2/catch.hpp>

namespace ptprof::record {
namespace {

triggers::TriggerEngine EngineFor(const std::string& text) {
  triggers::SnapshotPolicy policy;
  auto spec = triggers::ParseTrigger(text);
  REQUIRE(spec);
  policy.triggers.push_back(*spec);
  return triggers::TriggerEngine(policy);
}

std::vector<KallsymsEntry> Kallsyms() {
  return {{0xffffffff81000000, 'T', "_stext", ""},
          {0xffffffff81234560, 'T', "__x64_sys_getpid", ""},
          {0xffffffffc0001000, 't', "__x64_sys_getpid", "some_module"}};
}

TEST_CASE("addr=SYMBOL resolves through the guest kernel's kallsyms") {
  auto engine = EngineFor("addr=__x64_sys_getpid");
  REQUIRE(ResolveSystemAddressTriggers(Kallsyms(), "", engine));
  CHECK(engine.BreakpointAddresses() == std::vector<uint64_t>{0xffffffff81234560});
}

TEST_CASE("addr=0xADDR needs no symbols") {
  auto engine = EngineFor("addr=0x10001234");
  REQUIRE(ResolveSystemAddressTriggers({}, "", engine));
  CHECK(engine.BreakpointAddresses() == std::vector<uint64_t>{0x10001234});
}

TEST_CASE("a symbol neither the kernel nor the workload names is an error naming it") {
  auto engine = EngineFor("addr=no_such_function");
  auto st = ResolveSystemAddressTriggers(Kallsyms(), "", engine);
  REQUIRE(!st);
  CHECK(st.error().message.find("no_such_function") != std::string::npos);
}

TEST_CASE("a workload that cannot be read is an error naming the file") {
  auto engine = EngineFor("addr=main");
  auto st = ResolveSystemAddressTriggers(Kallsyms(), "/nonexistent/workload", engine);
  REQUIRE(!st);
  CHECK(st.error().message.find("/nonexistent/workload") != std::string::npos);
}

}  // namespace
}  // namespace ptprof::record
