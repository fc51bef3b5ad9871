#include "src/analyses/stackdiff/syscall_subtrees.h"

#include <catch2/catch.hpp>

namespace ptprof::stackdiff {
namespace {

// Drives the observer the way CallStackBuilder does: a lane's stack of frames whose nodes live in
// a tree of the lane's own.
struct FakeLane {
  StackLane lane;
  CallTree tree;
  SyscallSubtrees& observer;

  void Push(const std::string& name, FrameKind kind = FrameKind::kCall) {
    CallTreeNode& parent = lane.stack.empty() ? tree.root() : *lane.stack.back().node;
    StackFrame frame;
    frame.node = &parent.Child(name);
    frame.kind = kind;
    frame.function = 0xffffffff81000000;
    lane.stack.push_back(frame);
    observer.OnPush(lane, lane.stack.back());
  }
  void Pop() {
    observer.OnPop(lane, lane.stack.back());
    lane.stack.pop_back();
  }
  void Cost(uint64_t insns, uint64_t ns) { observer.OnCost(lane, insns, ns); }
};

void OneSyscall(FakeLane& l, const std::string& handler, uint64_t handler_insns) {
  l.Push("syscall_wrapper");
  l.Cost(3, 1);
  l.Push("entry_SYSCALL_64", FrameKind::kSyscall);
  l.Cost(20, 10);
  l.Push("do_syscall_64");
  l.Cost(10, 5);
  l.Push(handler);
  l.Cost(handler_insns, handler_insns);
  l.Pop();
  l.Cost(5, 2);
  l.Pop();
  l.Cost(7, 3);
  l.Pop();  // sysret
  l.Cost(2, 1);
  l.Pop();
}

TEST_CASE("handler names give the syscall") {
  CHECK(SyscallOfHandler("__x64_sys_getpid") == "getpid");
  CHECK(SyscallOfHandler("__arm64_sys_openat") == "openat");
  CHECK(SyscallOfHandler("sys_mmap") == "mmap");
  CHECK(SyscallOfHandler("do_syscall_64").empty());
  CHECK(SyscallOfHandler("__x64_sys_").empty());
}

TEST_CASE("the kernel trees of every instance of one syscall are merged") {
  SyscallSubtrees observer("getpid");
  FakeLane l{{}, {}, observer};
  l.lane.lane = 42;
  OneSyscall(l, "__x64_sys_getpid", 4);
  OneSyscall(l, "__x64_sys_mmap", 100);
  OneSyscall(l, "__x64_sys_getpid", 6);
  CHECK(observer.instances() == 2);
  CHECK(observer.seen().at("getpid") == 2);
  CHECK(observer.seen().at("mmap") == 1);
  CallTree tree = observer.Tree();
  const CallTreeNode* entry = tree.Find({"entry_SYSCALL_64"});
  REQUIRE(entry);
  CHECK(entry->entries == 2);
  CHECK(entry->self_insns == 2 * (20 + 7));
  CHECK(tree.Find({"entry_SYSCALL_64", "do_syscall_64"})->self_insns == 2 * (10 + 5));
  CHECK(tree.Find({"entry_SYSCALL_64", "do_syscall_64", "__x64_sys_getpid"})->total_insns == 10);
  CHECK(tree.root().total_insns == 2 * (20 + 7 + 10 + 5) + 10);  // no user-side instructions
  CHECK(tree.Find({"syscall_wrapper"}) == nullptr);
}

TEST_CASE("an instance cut by a gap is counted as incomplete, not merged") {
  SyscallSubtrees observer("getpid");
  FakeLane l{{}, {}, observer};
  l.Push("entry_SYSCALL_64", FrameKind::kSyscall);
  l.Push("__x64_sys_getpid");
  l.Cost(5, 5);
  observer.OnReset(l.lane);
  l.lane.stack.clear();
  CHECK(observer.instances() == 0);
  CHECK(observer.incomplete() == 1);
  CHECK(observer.Tree().root().children.empty());
}

}  // namespace
}  // namespace ptprof::stackdiff
