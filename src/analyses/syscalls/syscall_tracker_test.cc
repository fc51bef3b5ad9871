#include "src/analyses/syscalls/syscall_tracker.h"

#include <catch2/catch.hpp>

namespace ptprof::syscalls {
namespace {

SymbolTable KernelSymbols() {
  SymbolTable symbols;
  symbols.Add({"main", 0x1000, 0x100, 0});
  symbols.Add({"getpid_wrapper", 0x2000, 0x100, 0});
  symbols.Add({"entry_SYSCALL_64", 0xf000, 0x100, 0});
  symbols.Add({"x64_sys_call", 0xf100, 0x100, 0});
  symbols.Add({"__x64_sys_getpid", 0xf200, 0x100, 0});
  symbols.Add({"__fentry__", 0xf300, 0x100, 0});
  return symbols;
}

void Block(CallStackBuilder& builder, uint64_t& now, uint64_t first, uint64_t last, uint32_t insns,
           BlockEnd end) {
  TraceEvent event;
  event.header.tid = 5;
  event.header.pid = 5;
  event.header.time_ns = now;
  ExecBlock block;
  block.first_ip = first;
  block.last_ip = last;
  block.insns = insns;
  block.last_insn_size = 2;
  block.end = end;
  event.body = block;
  builder.OnEvent(event);
  now += 10 * insns;
}

TEST_CASE("a traced syscall: name from the handler, kernel instructions, tree and latency") {
  SymbolTable symbols = KernelSymbols();
  CallStackBuilder builder({&symbols, {}});
  SyscallTracker tracker(SyscallArch::kX86_64, [](uint64_t, uint64_t) {
    return std::optional<uint32_t>();  // the user code does not say
  });
  builder.AddObserver(&tracker);
  uint64_t now = 100;
  Block(builder, now, 0x1000, 0x1010, 3, BlockEnd::kCall);     // main -> wrapper
  Block(builder, now, 0x2000, 0x2010, 4, BlockEnd::kSyscall);  // wrapper: syscall at 0x2010
  Block(builder, now, 0xf000, 0xf010, 5, BlockEnd::kCall);     // entry -> x64_sys_call
  Block(builder, now, 0xf100, 0xf110, 2, BlockEnd::kJump);     // tail call to the handler
  Block(builder, now, 0xf200, 0xf208, 1, BlockEnd::kCall);     // handler -> __fentry__
  Block(builder, now, 0xf300, 0xf304, 6, BlockEnd::kReturn);
  Block(builder, now, 0xf20a, 0xf210, 2, BlockEnd::kReturn);
  Block(builder, now, 0xf012, 0xf020, 3, BlockEnd::kSysret);
  Block(builder, now, 0x2012, 0x2014, 1, BlockEnd::kReturn);
  Block(builder, now, 0x1012, 0x1014, 1, BlockEnd::kTraceStop);
  builder.OnEnd();
  tracker.Finish();
  REQUIRE(tracker.instances().size() == 1);
  const SyscallInstance& s = tracker.instances()[0];
  CHECK(s.name == "getpid");
  CHECK(s.number == 39);
  CHECK(s.number_source == "kernel path");
  CHECK(s.tid == 5);
  CHECK(s.caller == "getpid_wrapper");
  CHECK(s.syscall_ip == 0x2010);
  CHECK(s.user_insns == 4);
  CHECK(s.kernel_insns == 19);
  CHECK(s.latency_ns == 190);
  CHECK(s.start_ns == 170);
  CHECK(s.kernel_traced);
  CHECK(s.kernel_tree.Find({"entry_SYSCALL_64"})->total_insns == 19);
  CHECK(s.kernel_tree.Find({"entry_SYSCALL_64", "__x64_sys_getpid", "__fentry__"})->self_insns == 6);
  CHECK(tracker.counts().open_at_end == 0);
}

TEST_CASE("a syscall still in the kernel when the trace ends is dropped, counted") {
  SymbolTable symbols = KernelSymbols();
  CallStackBuilder builder({&symbols, {}});
  SyscallTracker tracker(SyscallArch::kX86_64, [](uint64_t, uint64_t) {
    return std::optional<uint32_t>(39);
  });
  builder.AddObserver(&tracker);
  uint64_t now = 0;
  Block(builder, now, 0x2000, 0x2010, 4, BlockEnd::kSyscall);
  Block(builder, now, 0xf000, 0xf010, 5, BlockEnd::kCall);
  Block(builder, now, 0xf200, 0xf204, 1, BlockEnd::kTraceStop);
  builder.OnEnd();
  tracker.Finish();
  CHECK(tracker.instances().empty());
  CHECK(tracker.counts().open_at_end == 1);
}

TEST_CASE("user-only syscalls: pushed and popped at the resume") {
  SymbolTable symbols = KernelSymbols();
  CallStackBuilder builder({&symbols, {}});
  SyscallTracker tracker(SyscallArch::kX86_64, [](uint64_t, uint64_t ip) {
    return ip == 0x2010 ? std::optional<uint32_t>(9) : std::nullopt;
  });
  builder.AddObserver(&tracker);
  uint64_t now = 0;
  Block(builder, now, 0x2000, 0x2010, 4, BlockEnd::kSyscall);
  Block(builder, now, 0x2012, 0x2020, 4, BlockEnd::kSyscall);
  Block(builder, now, 0x2022, 0x2024, 1, BlockEnd::kTraceStop);
  builder.OnEnd();
  tracker.Finish();
  REQUIRE(tracker.instances().size() == 2);
  CHECK(tracker.instances()[0].name == "mmap");
  CHECK(tracker.instances()[0].number_source == "user code");
  CHECK_FALSE(tracker.instances()[0].kernel_traced);
  CHECK(tracker.instances()[1].name == "unknown");
  CHECK(tracker.instances()[1].number == -1);
}

TEST_CASE("handler symbols name syscalls") {
  bool strong = false;
  CHECK(SyscallFromHandler("__x64_sys_openat", &strong) == "openat");
  CHECK(strong);
  CHECK(SyscallFromHandler("__do_sys_getpid.constprop.0", &strong) == "getpid");
  CHECK_FALSE(strong);
  CHECK_FALSE(SyscallFromHandler("x64_sys_call", &strong));
}

}  // namespace
}  // namespace ptprof::syscalls
