#include "src/record/triggers/trigger_spec.h"
#include "src/record/triggers/syscall_names.h"

#include <csignal>

#include <catch2/catch.hpp>

using namespace ptprof::record::triggers;

TEST_CASE("durations and sizes parse with their units") {
  CHECK(*ParseDuration("200us", "--post") == 200000);
  CHECK(*ParseDuration("1ms", "--post") == 1000000);
  CHECK(*ParseDuration("1.5s", "--post") == 1500000000);
  CHECK(*ParseDuration("0.25ms", "--post") == 250000);
  CHECK(*ParseDuration("7ns", "--post") == 7);
  CHECK(ParseDuration("5", "--post").error().message ==
        "--post: column 2: unit '' is not one of ns, us, ms, s");
  CHECK(ParseDuration("ms", "--post").error().message ==
        "--post: column 1: expected a duration like 200us, 1ms, 2s");
  CHECK(*ParseSize("4096", "--pre") == 4096);
  CHECK(*ParseSize("64K", "--pre") == 65536);
  CHECK(*ParseSize("4M", "--pre") == 4u << 20);
  CHECK(*ParseSize("1GiB", "--pre") == 1u << 30);
  CHECK(ParseSize("3X", "--pre").error().message ==
        "--pre: column 2: unit 'X' is not one of K, M, G");
  CHECK(FormatDuration(1000000) == "1ms");
  CHECK(FormatDuration(1500) == "1500ns");
  CHECK(FormatDuration(2000000000) == "2s");
}

TEST_CASE("every trigger kind parses") {
  CHECK(*SyscallNumberOf("io_uring_enter") == 426);
  CHECK(SyscallNameOf(35) == "nanosleep");
  auto s = ParseTrigger("syscall=nanosleep,getpid,7");
  REQUIRE(s);
  CHECK(s->kind == TriggerKind::kSyscall);
  CHECK(s->syscalls == std::vector<uint64_t>{35, 39, 7});
  CHECK(s->text == "syscall=nanosleep,getpid,7");

  auto l = ParseTrigger("syscall-latency>1ms:nanosleep");
  REQUIRE(l);
  CHECK(l->kind == TriggerKind::kSyscallLatency);
  CHECK(l->latency_ns == 1000000);
  CHECK(l->syscalls == std::vector<uint64_t>{35});
  auto any = ParseTrigger("syscall-latency>200us");
  REQUIRE(any);
  CHECK(any->syscalls.empty());
  CHECK(any->latency_ns == 200000);

  auto a = ParseTrigger("addr=0x401000");
  REQUIRE(a);
  CHECK(a->kind == TriggerKind::kAddress);
  CHECK(a->address == 0x401000);
  CHECK(a->symbol.empty());
  auto sym = ParseTrigger("addr=slow_path");
  REQUIRE(sym);
  CHECK(sym->symbol == "slow_path");

  auto sig = ParseTrigger("signal=USR2");
  REQUIRE(sig);
  CHECK(sig->signal == SIGUSR2);
  CHECK(ParseTrigger("signal=SIGUSR1")->signal == SIGUSR1);

  auto e = ParseTrigger("every=10ms");
  REQUIRE(e);
  CHECK(e->kind == TriggerKind::kEvery);
  CHECK(e->period_ns == 10000000);

  auto i = ParseTrigger("insns=1000");
  REQUIRE(i);
  CHECK(i->kind == TriggerKind::kInsns);
  CHECK(i->insns == 1000);
}

TEST_CASE("trigger errors name the column") {
  auto msg = [](const char* text) { return ParseTrigger(text).error().message; };
  CHECK(msg("syscall=nanosleep,bogus") ==
        "--snapshot-on 'syscall=nanosleep,bogus': column 19: unknown syscall 'bogus'" +
            SyscallHint("bogus"));
  CHECK(msg("syscall-latency>1xs:nanosleep") ==
        "--snapshot-on 'syscall-latency>1xs:nanosleep': column 18: unit 'xs' is not one of ns, us, "
        "ms, s");
  CHECK(msg("syscall-latency>1ms:nanoslep") ==
        "--snapshot-on 'syscall-latency>1ms:nanoslep': column 21: unknown syscall 'nanoslep' (did "
        "you mean nanosleep?)");
  CHECK(msg("syscall-latency>0ms") ==
        "--snapshot-on 'syscall-latency>0ms': column 17: the latency must be > 0");
  CHECK(msg("addr=0x12g") == "--snapshot-on 'addr=0x12g': column 6: bad hexadecimal address");
  CHECK(msg("signal=FOO") ==
        "--snapshot-on 'signal=FOO': column 8: unknown signal 'FOO' (USR1, USR2, HUP, ...)");
  CHECK(msg("every=") == "--snapshot-on 'every=': column 7: missing value after '='");
  CHECK(msg("insns=0") == "--snapshot-on 'insns=0': column 7: expected insns=N with N > 0");
  CHECK(msg("sometimes=1") ==
        "--snapshot-on 'sometimes=1': column 1: unknown trigger 'sometimes' (syscall, "
        "syscall-latency, addr, signal, every, insns)");
  CHECK(msg("syscall") .find("column 1: expected syscall=NAME") != std::string::npos);
}
