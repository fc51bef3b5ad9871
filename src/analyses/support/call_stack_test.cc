#include "src/analyses/support/call_stack.h"

#include <catch2/catch.hpp>

#include <initializer_list>
#include <map>

namespace ptprof {
namespace {

// Functions at 0x1000 (main), 0x2000 (f), 0x3000 (g), 0x4000 (h); kernel entry at 0xf000.
SymbolTable TestSymbols() {
  SymbolTable symbols;
  symbols.Add({"main", 0x1000, 0x100, 0});
  symbols.Add({"f", 0x2000, 0x100, 0});
  symbols.Add({"g", 0x3000, 0x100, 0});
  symbols.Add({"h", 0x4000, 0x100, 0});
  symbols.Add({"entry_SYSCALL_64", 0xf000, 0x100, 0});
  symbols.Add({"__x64_sys_getpid", 0xf200, 0x100, 0});
  return symbols;
}

// Feeds blocks of one thread (tid 7) with a time of 10 ns per instruction.
class Feeder {
 public:
  explicit Feeder(CallStackBuilder& builder) : builder_(builder) {}
  // A block of `insns` instructions from `first` whose last instruction (2 bytes) ends it.
  void Block(uint64_t first, uint64_t last, uint32_t insns, BlockEnd end, int32_t tid = 7) {
    TraceEvent event;
    event.header.tid = tid;
    event.header.time_ns = now_;
    ExecBlock block;
    block.first_ip = first;
    block.last_ip = last;
    block.insns = insns;
    block.last_insn_size = 2;
    block.end = end;
    event.body = block;
    builder_.OnEvent(event);
    now_ += 10 * insns;
  }
  void Gap(int32_t tid = 7) {
    TraceEvent event;
    event.header.tid = tid;
    event.header.time_ns = now_;
    event.body = TraceGap{};
    builder_.OnEvent(event);
  }
  void Disabled() {
    TraceEvent event;
    event.header.tid = 7;
    event.header.time_ns = now_;
    event.body = TraceToggle{TraceToggle::Kind::kDisabled, 0, false};
    builder_.OnEvent(event);
  }
  void Wait(uint64_t ns) { now_ += ns; }
  // main calls f, f returns, and the trace stops in main: in each of `tids`, a block of each in
  // turn.
  void CallAndReturn(std::initializer_list<int32_t> tids) {
    for (const int32_t tid : tids) Block(0x1000, 0x1010, 4, BlockEnd::kCall, tid);
    for (const int32_t tid : tids) Block(0x2000, 0x2004, 2, BlockEnd::kReturn, tid);
    for (const int32_t tid : tids) Block(0x1012, 0x1014, 1, BlockEnd::kTraceStop, tid);
  }

 private:
  CallStackBuilder& builder_;
  uint64_t now_ = 1000;
};

struct Recorder : CallStackObserver {
  std::vector<std::string> log;
  void OnPush(const StackLane&, const StackFrame& frame) override {
    log.push_back("push " + frame.node->name + " " + FrameKindName(frame.kind));
  }
  void OnPop(const StackLane& lane, const StackFrame& frame) override {
    log.push_back("pop " + frame.node->name + " insns " +
                  std::to_string(lane.insns - frame.entry_insns) + " ns " +
                  std::to_string(lane.ns - frame.entry_ns));
  }
};

TEST_CASE("calls and returns build the tree with self and total counts") {
  SymbolTable symbols = TestSymbols();
  CallStackBuilder builder({&symbols, {}});
  Feeder feed(builder);
  feed.Block(0x1000, 0x1010, 4, BlockEnd::kCall);      // main calls f (returns to 0x1012)
  feed.Block(0x2000, 0x2008, 3, BlockEnd::kCall);      // f calls g (returns to 0x200a)
  feed.Block(0x3000, 0x3004, 2, BlockEnd::kReturn);    // g returns
  feed.Block(0x200a, 0x200c, 1, BlockEnd::kCall);      // f calls g again
  feed.Block(0x3000, 0x3004, 2, BlockEnd::kReturn);
  feed.Block(0x200e, 0x2010, 1, BlockEnd::kReturn);    // f returns
  feed.Block(0x1012, 0x1014, 5, BlockEnd::kTraceStop);
  builder.OnEnd();

  const CallTree& tree = builder.TreeOf(7);
  const CallTreeNode* main_fn = tree.Find({"main"});
  const CallTreeNode* f = tree.Find({"main", "f"});
  const CallTreeNode* g = tree.Find({"main", "f", "g"});
  REQUIRE(main_fn);
  REQUIRE(f);
  REQUIRE(g);
  CHECK(main_fn->entries == 1);
  CHECK(f->entries == 1);
  CHECK(g->entries == 2);
  CHECK(main_fn->self_insns == 9);
  CHECK(f->self_insns == 5);
  CHECK(g->self_insns == 4);
  CHECK(main_fn->total_insns == 18);
  CHECK(g->self_ns == 40);
  CHECK(f->total_ns == 90);
  CHECK(builder.repairs().Total() == 0);
  CHECK(builder.repairs().stack_starts == 1);
  CHECK(builder.Lanes() == std::vector<int32_t>{7});
}

TEST_CASE("a return above the first frame adds a synthetic caller, counted") {
  SymbolTable symbols = TestSymbols();
  CallStackBuilder builder({&symbols, {}});
  Feeder feed(builder);
  feed.Block(0x3010, 0x3014, 2, BlockEnd::kReturn);  // the trace starts inside g
  feed.Block(0x2020, 0x2024, 2, BlockEnd::kReturn);  // g's caller f, then f returns too
  feed.Block(0x1020, 0x1024, 2, BlockEnd::kTraceStop);
  builder.OnEnd();
  CHECK(builder.repairs().returns_above_start == 2);
  const CallTree& tree = builder.TreeOf(7);
  CHECK(tree.Find({"g"}));
  CHECK(tree.Find({"f"}));
  CHECK(tree.Find({"main"})->self_insns == 2);
}

TEST_CASE("a jump to another function's entry is a tail call, counted") {
  SymbolTable symbols = TestSymbols();
  CallStackBuilder builder({&symbols, {}});
  Feeder feed(builder);
  feed.Block(0x1000, 0x1010, 4, BlockEnd::kCall);  // main calls f
  feed.Block(0x2000, 0x2008, 3, BlockEnd::kJump);  // f jumps to g's entry
  feed.Block(0x3000, 0x3004, 2, BlockEnd::kJump);  // a jump inside g is not a tail call
  feed.Block(0x3008, 0x300a, 1, BlockEnd::kReturn);  // g returns to main
  feed.Block(0x1012, 0x1014, 1, BlockEnd::kTraceStop);
  builder.OnEnd();
  CHECK(builder.repairs().tail_calls == 1);
  const CallTree& tree = builder.TreeOf(7);
  CHECK(tree.Find({"main", "f"})->self_insns == 3);
  CHECK(tree.Find({"main", "g"})->self_insns == 3);
  CHECK(tree.Find({"main"})->self_insns == 5);
  CHECK(builder.repairs().unmatched_returns == 0);
}

TEST_CASE("a longjmp-style return or jump further up pops the frames above, counted") {
  SymbolTable symbols = TestSymbols();
  CallStackBuilder builder({&symbols, {}});
  Recorder recorder;
  builder.AddObserver(&recorder);
  Feeder feed(builder);
  feed.Block(0x1000, 0x1010, 4, BlockEnd::kCall);    // main -> f
  feed.Block(0x2000, 0x2008, 3, BlockEnd::kCall);    // f -> g
  feed.Block(0x3000, 0x3008, 3, BlockEnd::kCall);    // g -> h
  feed.Block(0x4000, 0x4004, 2, BlockEnd::kReturn);  // h returns straight to main's return site
  feed.Block(0x1012, 0x1014, 1, BlockEnd::kCall);    // main -> f
  feed.Block(0x2000, 0x2008, 3, BlockEnd::kCall);    // f -> g
  feed.Block(0x3000, 0x3004, 2, BlockEnd::kJump);    // longjmp into main (not its entry)
  feed.Block(0x1030, 0x1034, 1, BlockEnd::kTraceStop);
  builder.OnEnd();
  CHECK(builder.repairs().unwinds == 2);
  CHECK(builder.repairs().frames_unwound == 3);
  CHECK(builder.TreeOf(7).Find({"main"})->self_insns == 6);
  CHECK(builder.TreeOf(7).Find({"main", "f", "g", "h"})->entries == 1);
}

TEST_CASE("a return no frame expects changes the top frame's function, counted") {
  SymbolTable symbols = TestSymbols();
  CallStackBuilder builder({&symbols, {}});
  Feeder feed(builder);
  feed.Block(0x1000, 0x1010, 4, BlockEnd::kCall);    // main -> f
  feed.Block(0x2000, 0x2008, 3, BlockEnd::kCall);    // f -> g
  feed.Block(0x3000, 0x3004, 2, BlockEnd::kReturn);  // g "returns" into h
  feed.Block(0x4010, 0x4014, 2, BlockEnd::kTraceStop);
  builder.OnEnd();
  CHECK(builder.repairs().unmatched_returns == 1);
  CHECK(builder.TreeOf(7).Find({"main", "f", "h"})->self_insns == 2);
}

TEST_CASE("syscalls push a frame named after the kernel entry; sysret pops to it") {
  SymbolTable symbols = TestSymbols();
  CallStackBuilder builder({&symbols, {}});
  Recorder recorder;
  builder.AddObserver(&recorder);
  Feeder feed(builder);
  feed.Block(0x1000, 0x1010, 4, BlockEnd::kSyscall);
  feed.Block(0xf000, 0xf008, 3, BlockEnd::kCall);    // entry calls a helper
  feed.Block(0xf200, 0xf208, 5, BlockEnd::kReturn);
  feed.Block(0xf00a, 0xf010, 2, BlockEnd::kSysret);
  feed.Block(0x1012, 0x1014, 1, BlockEnd::kTraceStop);
  builder.OnEnd();
  const CallTree& tree = builder.TreeOf(7);
  CHECK(tree.Find({"main", "entry_SYSCALL_64"})->total_insns == 10);
  CHECK(tree.Find({"main", "entry_SYSCALL_64", "__x64_sys_getpid"})->self_insns == 5);
  CHECK(recorder.log == std::vector<std::string>{
                            "push main start", "push entry_SYSCALL_64 syscall",
                            "push __x64_sys_getpid call", "pop __x64_sys_getpid insns 5 ns 50",
                            "pop entry_SYSCALL_64 insns 10 ns 100"});
}

// `Observer`, listening to kernel entries only until a syscall frame is pushed, and again once
// it pops.
template <typename Observer>
struct HearingInSyscalls : Observer {
  HearingInSyscalls() { this->ListenToKernelEntriesOnly(true); }
  void OnPush(const StackLane& lane, const StackFrame& frame) override {
    Observer::OnPush(lane, frame);
    if (frame.kind == FrameKind::kSyscall) this->ListenToKernelEntriesOnly(false);
  }
  void OnPop(const StackLane& lane, const StackFrame& frame) override {
    Observer::OnPop(lane, frame);
    if (frame.kind == FrameKind::kSyscall) this->ListenToKernelEntriesOnly(true);
  }
};

TEST_CASE("an observer listening to kernel entries only hears nothing else until it stops") {
  struct SyscallWatcher : HearingInSyscalls<Recorder> {
    void OnCost(const StackLane& lane, uint64_t insns, uint64_t) override {
      log.push_back("cost " + lane.stack.back().node->name + " " + std::to_string(insns));
    }
  };
  SymbolTable symbols = TestSymbols();
  CallStackBuilder builder({&symbols, {}});
  SyscallWatcher watcher;
  Recorder everything;
  builder.AddObserver(&watcher);
  builder.AddObserver(&everything);
  Feeder feed(builder);
  feed.Block(0x1000, 0x1010, 4, BlockEnd::kCall);
  feed.Block(0x2000, 0x2010, 2, BlockEnd::kSyscall);
  feed.Block(0xf000, 0xf008, 3, BlockEnd::kCall);
  feed.Block(0xf200, 0xf208, 5, BlockEnd::kReturn);
  feed.Block(0xf00a, 0xf010, 2, BlockEnd::kSysret);
  feed.Block(0x2012, 0x2014, 1, BlockEnd::kReturn);
  feed.Block(0x1012, 0x1014, 1, BlockEnd::kCall);
  feed.Block(0x3000, 0x3004, 1, BlockEnd::kTraceStop);
  builder.OnEnd();
  CHECK(watcher.log == std::vector<std::string>{
                           "push entry_SYSCALL_64 syscall", "cost entry_SYSCALL_64 3",
                           "push __x64_sys_getpid call", "cost __x64_sys_getpid 5",
                           "pop __x64_sys_getpid insns 5 ns 50", "cost entry_SYSCALL_64 2",
                           "pop entry_SYSCALL_64 insns 10 ns 100"});
  // The other observer hears everything, as before.
  CHECK(everything.log.size() == 8);
  CHECK(everything.log.front() == "push main start");
  CHECK(everything.log.back() == "push g call");
}

TEST_CASE("a syscall whose kernel side is not traced takes the time the trace was off") {
  SymbolTable symbols = TestSymbols();
  CallStackBuilder builder({&symbols, {}});
  Recorder recorder;
  builder.AddObserver(&recorder);
  Feeder feed(builder);
  feed.Block(0x1000, 0x1010, 4, BlockEnd::kSyscall);
  feed.Disabled();
  feed.Wait(500);
  feed.Block(0x1012, 0x1014, 1, BlockEnd::kTraceStop);
  builder.OnEnd();
  CHECK(builder.repairs().untraced_syscalls == 1);
  CHECK(recorder.log.back() == "pop [kernel] insns 0 ns 500");
  CHECK(builder.TreeOf(7).Find({"main"})->self_ns == 40);
}

TEST_CASE("an iret without an interrupt frame and a gap restart the stack, counted") {
  SymbolTable symbols = TestSymbols();
  CallStackBuilder builder({&symbols, {}});
  Feeder feed(builder);
  feed.Block(0xf010, 0xf014, 2, BlockEnd::kIret);  // the trace starts in the kernel
  feed.Block(0x1000, 0x1010, 4, BlockEnd::kCall);
  feed.Gap();
  feed.Block(0x2010, 0x2014, 1, BlockEnd::kTraceStop);
  builder.OnEnd();
  CHECK(builder.repairs().unmatched_kernel_exits == 1);
  CHECK(builder.repairs().gap_resets == 1);
  CHECK(builder.repairs().stack_starts == 2);
  CHECK(builder.TreeOf(7).Find({"f"})->self_insns == 1);
  CHECK(builder.TreeOf(7).Find({"main"})->self_insns == 4);
}

TEST_CASE("threads have their own stacks; Merged adds them path by path") {
  SymbolTable symbols = TestSymbols();
  CallStackBuilder builder({&symbols, {}});
  Feeder feed(builder);
  feed.CallAndReturn({1, 2});
  builder.OnEnd();
  CHECK(builder.repairs().Total() == 0);
  CallTree merged = builder.Merged();
  CHECK(merged.Find({"main", "f"})->entries == 2);
  CHECK(merged.Find({"main"})->total_insns == 14);
  CallTree taken = builder.TakeMerged();  // two lanes: merged as Merged does
  CHECK(taken.Find({"main", "f"})->entries == 2);
  CHECK(taken.Find({"main"})->total_insns == 14);
}

TEST_CASE("TakeMerged hands one lane's tree over as Merged would copy it") {
  SymbolTable symbols = TestSymbols();
  CallStackBuilder builder({&symbols, {}});
  Feeder feed(builder);
  feed.CallAndReturn({1});
  builder.OnEnd();
  auto dump = [](const CallTree& tree) {
    std::string text;
    tree.ForEach([&](const CallTreeNode& node, int depth) {
      text += std::to_string(depth) + " " + node.name + " " + std::to_string(node.entries) + " " +
              std::to_string(node.self_insns) + " " + std::to_string(node.total_insns) + "\n";
    });
    return text;
  };
  const std::string merged = dump(builder.Merged());
  CHECK(merged.find("main") != std::string::npos);
  CHECK(dump(builder.TakeMerged()) == merged);
  CHECK(dump(builder.TreeOf(1)).empty());  // the lane's tree went with it
}

TEST_CASE("without symbols frames are named after the call target") {
  CallStackBuilder builder({nullptr, {}});
  Feeder feed(builder);
  feed.Block(0x1000, 0x1010, 4, BlockEnd::kCall);
  feed.Block(0x2000, 0x2004, 2, BlockEnd::kReturn);
  feed.Block(0x1012, 0x1014, 1, BlockEnd::kTraceStop);
  builder.OnEnd();
  CHECK(builder.TreeOf(7).Find({"0x1000", "0x2000"})->self_insns == 2);
  CHECK(RepairCountsText(builder.repairs()).find("tail calls 0") != std::string::npos);
  CHECK(RepairCountsJson(builder.repairs()).find("\"stack_starts\":1") != std::string::npos);
}

}  // namespace
}  // namespace ptprof

namespace ptprof {

namespace {

// Every node of a tree with its counts, depth first.
void Dump(const CallTreeNode& node, int depth, std::string& out) {
  out += std::string(depth, ' ') + node.name + " " + std::to_string(node.entries) + " " +
         std::to_string(node.self_insns) + " " + std::to_string(node.self_ns) + " " +
         std::to_string(node.total_insns) + "\n";
  for (const auto& child : node.children) Dump(*child, depth + 1, out);
}

// What observers hear: pushes, pops, resets, and the cost per frame summed.
struct Totals : CallStackObserver {
  std::string log;
  std::map<std::string, uint64_t> cost_insns, cost_ns;
  void OnPush(const StackLane& lane, const StackFrame& frame) override {
    log += "+" + frame.node->name + ":" + FrameKindName(frame.kind) + ":" +
           std::to_string(frame.return_ip) + ":" + std::to_string(frame.entry_insns) + ":" +
           std::to_string(lane.block_last_ip);
  }
  void OnPop(const StackLane& lane, const StackFrame& frame) override {
    log += "-" + frame.node->name + std::to_string(lane.insns - frame.entry_insns);
  }
  void OnCost(const StackLane& lane, uint64_t insns, uint64_t ns) override {
    cost_insns[lane.stack.back().node->name] += insns;
    cost_ns[lane.stack.back().node->name] += ns;
  }
  void OnReset(const StackLane&) override { log += "!"; }
};

// Totals that hears kernel entries only, but everything while a syscall frame is open: the
// builder then makes the other pushes and pops without telling anyone.
using SyscallTotals = HearingInSyscalls<Totals>;

}  // namespace

TEST_CASE("blocks in batches build what the same blocks one by one build") {
  SymbolTable symbols = TestSymbols();
  // One thread's blocks: calls, returns, a tail call, a syscall, jumps, with a gap in between.
  struct Step {
    uint64_t first, last;
    uint32_t insns;
    BlockEnd end;
  };
  const std::vector<Step> steps = {
      {0x1000, 0x1010, 4, BlockEnd::kCall},     {0x2000, 0x2008, 3, BlockEnd::kCondTaken},
      {0x2020, 0x2028, 3, BlockEnd::kCall},     {0x3000, 0x3004, 2, BlockEnd::kJump},
      {0x4000, 0x4004, 2, BlockEnd::kReturn},   {0x202a, 0x2030, 2, BlockEnd::kSyscall},
      {0xf000, 0xf010, 5, BlockEnd::kCall},     {0xf200, 0xf210, 6, BlockEnd::kReturn},
      {0xf012, 0xf020, 3, BlockEnd::kSysret},   {0x2032, 0x2040, 4, BlockEnd::kCondNotTaken},
      {0x2042, 0x2044, 1, BlockEnd::kReturn},   {0x1012, 0x1020, 7, BlockEnd::kCondTaken},
      {0x1000, 0x1010, 4, BlockEnd::kCall},     {0x2000, 0x2008, 3, BlockEnd::kCondTaken},
      // f: a retpoline (a local call whose return is a jump to g), g returns to main, which
      // calls into the middle of h and returns.
      {0x200a, 0x2010, 2, BlockEnd::kCall},     {0x2050, 0x2054, 2, BlockEnd::kReturn},
      {0x3000, 0x3008, 3, BlockEnd::kReturn},   {0x1012, 0x1014, 1, BlockEnd::kCall},
      {0x4010, 0x4014, 2, BlockEnd::kReturn},   {0x1016, 0x1018, 1, BlockEnd::kCall},
      // f calls g, which returns two frames up (an unwind), then main jumps to h's entry.
      {0x2000, 0x2004, 2, BlockEnd::kCall},     {0x3000, 0x3004, 2, BlockEnd::kReturn},
      {0x101a, 0x1020, 2, BlockEnd::kJump},     {0x4000, 0x4008, 3, BlockEnd::kCondTaken},
      // h calls f, whose local call never returns (a get-pc thunk), f calls g, both return.
      {0x400a, 0x4010, 2, BlockEnd::kCall},     {0x2000, 0x2004, 2, BlockEnd::kCall},
      {0x2070, 0x2074, 2, BlockEnd::kCall},     {0x3000, 0x3004, 2, BlockEnd::kReturn},
      {0x2076, 0x207a, 2, BlockEnd::kReturn},   {0x4012, 0x4014, 1, BlockEnd::kCondTaken}};
  // batch_size 0: one by one (OnEvent).
  auto run = [&](size_t batch_size, std::string& tree, Totals& totals, RepairCounts& repairs,
                 Totals* syscall_totals = nullptr) {
    const bool batched = batch_size != 0;
    // Time from the TSC (the default takes time_ns only).
    CallStackBuilder builder({&symbols, [](const EventHeader& h) -> std::optional<uint64_t> {
                                if (h.tsc == kUnknownTime) return std::nullopt;
                                return h.tsc * 2;
                              }});
    builder.AddObserver(syscall_totals ? syscall_totals : &totals);
    std::vector<PackedEvent> packed;
    uint64_t tsc = 100;
    auto flush = [&] {
      BlockBatch batch;
      batch.blocks = packed;
      batch.tid = 7;
      builder.OnBlocks(batch);
      packed.clear();
    };
    for (int round = 0; round < 3; ++round) {
      for (const Step& step : steps) {
        ExecBlock block;
        block.first_ip = step.first;
        block.last_ip = step.last;
        block.insns = step.insns;
        block.last_insn_size = 2;
        block.end = step.end;
        TraceEvent event{EventHeader{}, block};
        event.header.tid = 7;
        event.header.tsc = tsc;
        tsc += step.insns % 3 ? 10 : 0;  // some blocks share a time, as blocks of one packet do
        if (!batched) {
          builder.OnEvent(event);
          continue;
        }
        packed.emplace_back();
        PackBlock(event, packed.back());
        if (packed.size() == batch_size) flush();
      }
      if (batched) flush();
      TraceEvent gap{EventHeader{}, TraceGap{}};
      gap.header.tid = 7;
      builder.OnEvent(gap);
    }
    builder.OnEnd();
    Dump(builder.Merged().root(), 0, tree);
    repairs = builder.repairs();
  };
  std::string one_by_one;
  Totals totals_one;
  RepairCounts repairs_one;
  run(0, one_by_one, totals_one, repairs_one);
  CHECK(repairs_one.local_calls == 6);
  CHECK(repairs_one.unmatched_returns == 0);
  CHECK(repairs_one.unwinds == 3);
  CHECK(repairs_one.tail_calls == 9);
  CHECK(one_by_one.find("0x4010") != std::string::npos);
  CHECK(one_by_one.find("g") != std::string::npos);
  CHECK(totals_one.cost_ns["f"] > 0);
  // Each block first in its batch, batches of a few, all of a round in one.
  for (size_t batch_size : {1, 5, 64}) {
    INFO("batches of " << batch_size);
    std::string in_batches;
    Totals totals_batched;
    RepairCounts repairs_batched;
    run(batch_size, in_batches, totals_batched, repairs_batched);
    CHECK(in_batches == one_by_one);
    CHECK(totals_batched.log == totals_one.log);
    CHECK(totals_batched.cost_insns == totals_one.cost_insns);
    CHECK(totals_batched.cost_ns == totals_one.cost_ns);
    CHECK(RepairCountsJson(repairs_batched) == RepairCountsJson(repairs_one));
  }
  // With an observer that hears everything only inside syscalls, the batches make most pushes
  // and pops telling no one: the same tree, and the same told of the syscalls.
  SyscallTotals syscalls_one;
  std::string heard_one_by_one;
  run(0, heard_one_by_one, totals_one, repairs_one, &syscalls_one);
  CHECK(heard_one_by_one == one_by_one);
  CHECK(syscalls_one.log.find("+entry_SYSCALL_64:syscall") != std::string::npos);
  CHECK(syscalls_one.cost_insns["__x64_sys_getpid"] > 0);
  for (size_t batch_size : {1, 5, 64}) {
    INFO("batches of " << batch_size << ", heard inside syscalls only");
    std::string in_batches;
    Totals unused;
    RepairCounts repairs_batched;
    SyscallTotals syscalls_batched;
    run(batch_size, in_batches, unused, repairs_batched, &syscalls_batched);
    CHECK(in_batches == one_by_one);
    CHECK(syscalls_batched.log == syscalls_one.log);
    CHECK(syscalls_batched.cost_insns == syscalls_one.cost_insns);
    CHECK(syscalls_batched.cost_ns == syscalls_one.cost_ns);
    CHECK(RepairCountsJson(repairs_batched) == RepairCountsJson(repairs_one));
  }
}

}  // namespace ptprof
