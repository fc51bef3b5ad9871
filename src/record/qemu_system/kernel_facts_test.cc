#include "src/record/qemu_system/kernel_facts.h"

#include <catch2/catch.hpp>

using namespace ptprof;
using namespace ptprof::record;

TEST_CASE("kernel facts: syscall entry, interrupt and fault entries, handlers") {
  auto entries = ParseKallsyms(
      "ffffffff81c00080 T entry_SYSCALL_64\n"
      "ffffffff81a00ab0 T asm_exc_page_fault\n"
      "ffffffff81a00c00 T asm_exc_int3\n"
      "ffffffff81a00d00 T asm_sysvec_apic_timer_interrupt\n"
      "ffffffff81a00000 T irq_entries_start\n"
      "ffffffff81a00800 T spurious_entries_start\n"
      "ffffffff810b0f40 T __x64_sys_getpid\n"
      "ffffffff82000000 D __x64_sys_data_not_text\n",
      "k");
  REQUIRE(entries);
  auto facts = KernelFacts::FromKallsyms(*entries, "k");
  REQUIRE(facts);
  CHECK(facts->syscall_entry() == 0xffffffff81c00080);
  CHECK(facts->EntryAt(0xffffffff81a00ab0) == KernelFacts::Entry::kFault);
  CHECK(facts->EntryAt(0xffffffff81a00c00) == KernelFacts::Entry::kInterrupt);
  CHECK(facts->EntryAt(0xffffffff81a00d00) == KernelFacts::Entry::kInterrupt);
  CHECK(facts->EntryAt(0xffffffff81a00010) == KernelFacts::Entry::kInterrupt);  // an IRQ stub
  CHECK(facts->EntryAt(0xffffffff81a00800) == KernelFacts::Entry::kNone);
  CHECK(facts->HandlerAt(0xffffffff810b0f40) == "getpid");
  CHECK(facts->HandlerAt(0xffffffff810b0f41).empty());
  CHECK(facts->handlers() == 1);
}

TEST_CASE("kernel facts need entry_SYSCALL_64") {
  auto entries = ParseKallsyms("ffffffff81000000 T _stext\n", "k");
  REQUIRE(entries);
  auto facts = KernelFacts::FromKallsyms(*entries, "guest.channel");
  REQUIRE_FALSE(facts);
  CHECK(facts.error().message == "guest.channel: the kernel symbols do not name entry_SYSCALL_64");
}
