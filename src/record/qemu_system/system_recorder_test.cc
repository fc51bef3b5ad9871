#include "src/record/qemu_system/system_recorder.h"

#include <catch2/catch.hpp>

using namespace ptprof::record;

TEST_CASE("a dynamically linked workload is refused with a one-line reason") {
  auto entry = StaticWorkloadEntry("/bin/sh");
  REQUIRE_FALSE(entry);
  CHECK(entry.error().message.find("not statically linked") != std::string::npos);
  auto text = StaticWorkloadEntry("/etc/hostname");
  REQUIRE_FALSE(text);
  CHECK(text.error().message.find("not an ELF file") != std::string::npos);
}

TEST_CASE("a missing kernel is named before anything runs") {
  SystemRecordOptions options;
  options.kernel = "/nonexistent/vmlinuz";
  options.argv = {"/bin/sh"};
  options.work_prefix = "/tmp/ptprof-lab-test";
  auto recording = RecordWithQemuSystem(options);
  REQUIRE_FALSE(recording);
  CHECK(recording.error().message.rfind("/nonexistent/vmlinuz: cannot read the guest kernel", 0) == 0);
}

TEST_CASE("an empty kallsyms channel is an error naming the channel") {
  LabChannel empty;
  auto facts = KernelFactsFromChannel(empty, "out.channel");
  REQUIRE_FALSE(facts);
  CHECK(facts.error().message ==
        "out.channel: the guest sent no kallsyms on its second serial port (the channel is "
        "empty); see the console log");
}
