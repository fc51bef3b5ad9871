#pragma once
// A random but plausible flow for the tests of consumers that take their stream in parts (the
// call stacks, the syscall tracker): two threads calling and returning, mostly matched, with
// their oddities. src/model/parted_testing.h feeds it to a sink as a decode would.
#include <algorithm>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "sideband/symbol_table.h"
#include "src/analyses/support/call_tree.h"
#include "src/model/parted_sink.h"
#include "src/model/parted_testing.h"

namespace ptprof::testing {

constexpr uint64_t kUser = 0x10000;            // user function i at kUser * i, i = 1..6
constexpr uint64_t kKernel = 0xffffffff81000000ull;  // syscall entry; kernel function j above
constexpr uint64_t kInterruptEntry = kKernel + 0x80000;

inline SymbolTable RandomFlowSymbols() {
  SymbolTable symbols;
  for (uint64_t i = 1; i <= 6; ++i)
    symbols.Add({"user" + std::to_string(i), kUser * i, 0x1000, 0});
  symbols.Add({"entry_SYSCALL_64", kKernel, 0x1000, 0});
  symbols.Add({"__x64_sys_getpid", kKernel + 0x10000, 0x1000, 0});  // a syscall handler
  for (uint64_t j = 2; j <= 3; ++j)
    symbols.Add({"kernel" + std::to_string(j), kKernel + 0x10000 * j, 0x1000, 0});
  symbols.Add({"asm_common_interrupt", kInterruptEntry, 0x1000, 0});
  return symbols;
}

// A plausible flow of two threads: calls and returns mostly matched, with tail calls, local calls,
// jumps into other functions, unwinds, returns no frame expects, syscalls with and without their
// kernel side, interrupts, gaps, disables, and blocks with and without a time.
class RandomFlow {
 public:
  explicit RandomFlow(uint32_t seed) : random_(seed) {}

  std::vector<TraceEvent> Run(size_t blocks) {
    std::vector<TraceEvent> events;
    while (events.size() < blocks) {
      if (Chance(10)) tid_ = tid_ == 7 ? 8 : 7;
      Thread& t = threads_[tid_ == 7 ? 0 : 1];
      if (Chance(1)) {
        events.push_back(Event(TraceGap{}));
        t = Thread{};
        continue;
      }
      if (Chance(1)) events.push_back(Event(TraceToggle{TraceToggle::Kind::kDisabled, 0, false}));
      Step(t, events);
    }
    return events;
  }

 private:
  struct Frame {
    uint64_t function, return_ip;
  };
  struct Thread {
    uint64_t ip = kUser * 3 + 0x100;
    std::vector<Frame> stack;
    bool kernel = false;
    size_t kernel_depth = 0;  // frames of the stack from the kernel entry on
  };

  bool Chance(int percent) { return std::uniform_int_distribution<int>(0, 99)(random_) < percent; }
  uint64_t Pick(uint64_t n) { return std::uniform_int_distribution<uint64_t>(0, n - 1)(random_); }
  uint64_t UserFunction() { return kUser * (1 + Pick(6)); }
  uint64_t KernelFunction() { return kKernel + 0x10000 * (1 + Pick(3)); }
  static uint64_t FunctionOf(uint64_t ip) { return ip & ~0xfffull; }
  uint64_t Inside(uint64_t function) { return function + 0x10 + 2 * Pick(0x700); }

  template <typename Body>
  TraceEvent Event(Body body) {
    EventHeader header;
    header.tid = tid_;
    header.time_ns = Chance(80) ? (now_ += 7) : kUnknownTime;
    return TraceEvent{header, std::move(body)};
  }

  // A block from t.ip ending in `end`, followed by `next` (kNextInstruction: the instruction
  // after its last). Returns the address after its last instruction.
  static constexpr uint64_t kNextInstruction = 1;
  uint64_t Emit(Thread& t, std::vector<TraceEvent>& events, BlockEnd end, uint64_t next) {
    ExecBlock block;
    block.first_ip = t.ip;
    block.insns = 1 + static_cast<uint32_t>(Pick(8));
    block.last_ip = t.ip + 4 * block.insns;
    block.last_insn_size = 2;
    block.end = end;
    events.push_back(Event(block));
    const uint64_t after = block.last_ip + block.last_insn_size;
    t.ip = next == kNextInstruction ? after : next;
    return after;
  }

  void Step(Thread& t, std::vector<TraceEvent>& events) {
    const uint64_t here = FunctionOf(t.ip);
    const uint64_t roll = Pick(100);
    if (roll < 30) {
      Emit(t, events, Chance(50) ? BlockEnd::kCondTaken : BlockEnd::kCondNotTaken, Inside(here));
      return;
    }
    // Stacks a few frames deep: below six frames calls are likelier, returns rarer (a return
    // above where the trace began comes now and then).
    const size_t depth = t.stack.size() - (t.kernel ? t.kernel_depth : 0);
    if (roll < 50 || (roll < 68 && depth < 6 && !Chance(3))) {
      uint64_t target = t.kernel ? KernelFunction() : UserFunction();
      if (Chance(5)) target = Inside(here);       // a local call (retpoline, get-pc)
      else if (Chance(5)) target = Inside(target);  // into the middle of a function
      const uint64_t after = Emit(t, events, BlockEnd::kCall, target);
      t.stack.push_back({FunctionOf(target), after});
      return;
    }
    if (roll < 68) {
      uint64_t target = Inside(UserFunction());
      const size_t floor = t.kernel ? t.kernel_depth : 0;
      if (t.stack.size() > floor) {
        if (Chance(2) && t.stack.size() > floor + 1) t.stack.pop_back();  // an unwind
        target = t.stack.back().return_ip;
        t.stack.pop_back();
        if (Chance(1)) target = Inside(FunctionOf(target));  // a return no frame expects
      } else if (t.kernel) {
        target = Inside(kKernel);
      }
      Emit(t, events, BlockEnd::kReturn, target);
      return;
    }
    if (roll < 74) {
      const uint64_t target = Chance(70) ? (t.kernel ? KernelFunction() : UserFunction())
                                         : Inside(t.kernel ? KernelFunction() : UserFunction());
      if (!t.stack.empty() && FunctionOf(target) == target) t.stack.back().function = target;
      Emit(t, events, BlockEnd::kJump, target);
      return;
    }
    if (roll < 80 && !t.kernel) {
      if (Chance(30)) {  // the kernel side untraced: the flow goes on after the instruction
        Emit(t, events, BlockEnd::kSyscall, kNextInstruction);
        return;
      }
      const uint64_t after = Emit(t, events, BlockEnd::kSyscall, kKernel + 0x40);
      t.stack.push_back({kKernel, after});
      t.kernel = true;
      t.kernel_depth = t.stack.size();
      return;
    }
    if (roll < 82 && !t.kernel) {
      const uint64_t after = Emit(t, events, BlockEnd::kInterrupt, kInterruptEntry);
      t.stack.push_back({kInterruptEntry, after});
      t.kernel = true;
      t.kernel_depth = t.stack.size();
      return;
    }
    if (roll < 88 && t.kernel && (t.stack.size() <= t.kernel_depth || Chance(3))) {
      // Back to user space from the entry code, now and then from wherever the kernel is.
      const bool known = t.stack.size() >= t.kernel_depth;
      const bool interrupt = known && t.stack[t.kernel_depth - 1].function == kInterruptEntry;
      const uint64_t target =
          known ? t.stack[t.kernel_depth - 1].return_ip : Inside(UserFunction());
      t.stack.resize(t.kernel_depth ? t.kernel_depth - 1 : 0);
      t.kernel = false;
      Emit(t, events, interrupt ? BlockEnd::kIret : BlockEnd::kSysret, target);
      return;
    }
    Emit(t, events, BlockEnd::kFallThrough, kNextInstruction);
  }

  std::mt19937 random_;
  Thread threads_[2];
  int32_t tid_ = 7;
  uint64_t now_ = 1000;
};

// Every node of a tree below `node` with its entries and self counts, depth first, indented.
inline void DumpTree(const CallTreeNode& node, int depth, std::string& out) {
  out += std::string(depth, ' ') + node.name + " " + std::to_string(node.entries) + " " +
         std::to_string(node.self_insns) + " " + std::to_string(node.self_ns) + "\n";
  for (const auto& child : node.children) DumpTree(*child, depth + 1, out);
}

// What comparing a consumer taken in parts with the whole stream adds up: parts folded, parts
// refused (decoded again into the consumer), and parts that began inside a syscall and were
// folded (`gone_on`).
struct PartsTally {
  size_t folded = 0, refused = 0;
  uint64_t gone_on = 0;
  template <typename Outcome>
  void Add(const Outcome& got) {
    folded += got.folded;
    refused += got.refused;
    gone_on += got.gone_on;
  }
};

// For the random flows of seeds 1 to 30 (3000 events each), their events one by one and in
// batches: `run(events, cuts, batched)` over the whole stream (cuts {}) and over SomeRandomCuts,
// `same(whole, got)` for each of the latter, and `on_whole(whole)` once per whole. The outcomes
// have `folded`, `refused` and `gone_on`.
template <typename Run, typename Same, typename OnWhole>
PartsTally CompareRandomFlowsInParts(const Run& run, const Same& same, const OnWhole& on_whole) {
  PartsTally tally;
  for (uint32_t seed = 1; seed <= 30; ++seed) {
    const std::vector<TraceEvent> events = RandomFlow(seed).Run(3000);
    for (bool batched : {false, true}) {
      const auto whole = run(events, std::vector<size_t>{}, batched);
      on_whole(whole);
      for (const std::vector<size_t>& cuts : SomeRandomCuts(events.size(), seed)) {
        INFO("seed " << seed << (batched ? ", batched" : "") << ", " << cuts.size() - 1
                     << " parts");
        const auto got = run(events, cuts, batched);
        same(whole, got);
        tally.Add(got);
      }
    }
  }
  return tally;
}

// The random flow of seed 7 (800 events) cut in two at every event: `run(events, cuts, false)`
// against the whole, `same(whole, got)`; the whole's outcome and what the parts added up.
template <typename Run, typename Same>
auto CompareCutAtEveryEvent(const Run& run, const Same& same) {
  const std::vector<TraceEvent> events = RandomFlow(7).Run(800);
  const auto whole = run(events, std::vector<size_t>{}, false);
  PartsTally tally;
  for (size_t cut = 1; cut < events.size(); ++cut) {
    INFO("cut at " << cut);
    const auto got = run(events, std::vector<size_t>{0, cut, events.size()}, false);
    same(whole, got);
    tally.Add(got);
  }
  return std::pair{whole, tally};
}

}  // namespace ptprof::testing
