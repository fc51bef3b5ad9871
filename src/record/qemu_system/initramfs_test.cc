#include "src/record/qemu_system/initramfs.h"

#include <catch2/catch.hpp>

using namespace ptprof::record;

TEST_CASE("cpio newc: headers, names and data padded to 4 bytes, trailer") {
  CpioArchive cpio;
  cpio.AddDirectory("bin");
  cpio.AddFile("init", {'h', 'i'});
  auto bytes = cpio.Finish();
  std::string text(bytes.begin(), bytes.end());
  REQUIRE(text.rfind("070701", 0) == 0);
  // bin: 110-byte header + "bin\0" = 114, padded to 116; then the file's header.
  CHECK(text.substr(110, 3) == "bin");
  CHECK(text.substr(116, 6) == "070701");
  CHECK(text.substr(116 + 6 + 8, 8) == "000081ed");  // regular file, 0755
  CHECK(text.substr(116 + 6 + 48, 8) == "00000002");  // file size
  CHECK(text.find("TRAILER!!!") != std::string::npos);
  CHECK(bytes.size() % 4 == 0);
}

TEST_CASE("the init script sets the tracer, quotes the arguments and powers off") {
  LabGuest guest;
  guest.tracer = "function";
  guest.workload_name = "lab_syscalls";
  guest.args = {"20", "it's"};
  const std::string script = LabInitScript(guest);
  CHECK(script.rfind("#!/bin/busybox sh\n", 0) == 0);
  CHECK(script.find("echo 'function' > /sys/kernel/tracing/current_tracer") != std::string::npos);
  CHECK(script.find("/work/'lab_syscalls' '20' 'it'\\''s'") != std::string::npos);
  CHECK(script.find("file kallsyms.gz") != std::string::npos);
  CHECK(script.find("poweroff -f") != std::string::npos);
}

TEST_CASE("a missing busybox or workload is named") {
  auto missing = BuildLabInitramfs("/nonexistent/busybox", "/bin/sh", LabGuest{});
  REQUIRE_FALSE(missing);
  CHECK(missing.error().message.find("/nonexistent/busybox") == 0);
}
