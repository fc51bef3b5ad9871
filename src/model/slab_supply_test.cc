#include "src/model/slab_supply.h"

#include <sys/mman.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "src/model/huge_slabs.h"
#include "tests/unit/child_process.h"

namespace ptprof {
namespace {

constexpr size_t kSlab = HugeSlabs::kSlabBytes;

// The 4 KiB pages of `slab` the process has in memory.
size_t ResidentPages(void* slab) {
  std::vector<unsigned char> pages(kSlab / 4096);
  if (mincore(slab, kSlab, pages.data()) != 0) return 0;
  size_t resident = 0;
  for (unsigned char page : pages) resident += page & 1;
  return resident;
}

// Waits (up to a minute: the helper is a thread of its own) until `count` slabs are ready.
bool WaitReady(size_t count) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::minutes(1);
  while (SlabsReady() < count) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

// Unmaps the slabs given back by earlier tests (their HugeSlabs), so that the next one taken is
// a fresh one.
void DropKept() {
  while (SlabsKept() > 0) UnmapHuge(TakeSlab(), kSlab);
}

bool Zero(const void* slab) {
  const auto* bytes = static_cast<const unsigned char*>(slab);
  for (size_t i = 0; i < kSlab; ++i)
    if (bytes[i] != 0) return false;
  return true;
}

TEST_CASE("TakeSlab gives aligned, zero, writable slabs, and the helper faults in the next") {
  DropKept();
  void* first = TakeSlab();
  REQUIRE(first != nullptr);
  CHECK(reinterpret_cast<uintptr_t>(first) % kSlab == 0);
  // The helper, started by the first slab, makes the next ones ready with their pages in memory.
  REQUIRE(WaitReady(2));
  void* ready = TakeSlab();
  CHECK(reinterpret_cast<uintptr_t>(ready) % kSlab == 0);
  CHECK(ResidentPages(ready) == kSlab / 4096);
  CHECK(Zero(ready));
  static_cast<char*>(ready)[kSlab - 1] = 1;  // its own memory, writable to the end
  // Taking one asks for another: two are ready again.
  CHECK(WaitReady(2));
  CHECK(Zero(first));
  UnmapHuge(first, kSlab);
  UnmapHuge(ready, kSlab);
}

TEST_CASE("A slab given back is taken again before a fresh one, as its last user left it") {
  DropKept();
  void* slab = TakeSlab();
  static_cast<char*>(slab)[kSlab - 1] = 42;
  GiveSlab(slab);
  CHECK(SlabsKept() == 1);
  void* again = TakeSlab();
  CHECK(again == slab);
  CHECK(static_cast<char*>(again)[kSlab - 1] == 42);  // not cleared
  CHECK(SlabsKept() == 0);
  // Past kKeptSlabs, a slab given back is unmapped; null is nothing.
  std::vector<void*> slabs{again};
  for (size_t i = 0; i < kKeptSlabs + 2; ++i) slabs.push_back(TakeSlab());
  for (void* taken : slabs) GiveSlab(taken);
  GiveSlab(nullptr);
  CHECK(SlabsKept() == kKeptSlabs);
  DropKept();
}

TEST_CASE("HugeSlabs gives its slabs back when it goes, and the next one carves from them") {
  DropKept();
  void* first_piece = nullptr;
  {
    HugeSlabs slabs;
    first_piece = slabs.Carve(kSlab);  // a whole slab: the piece is the slab
    slabs.Carve(64);                   // and a second one
  }
  if (HugeSlabs::PiecesOnTheHeap()) return;  // no slabs to give back under AddressSanitizer
  CHECK(SlabsKept() == 2);
  HugeSlabs next;
  void* piece = next.Carve(kSlab);
  CHECK(piece == first_piece);  // kept in the order given back, taken first to last
  CHECK(SlabsKept() == 1);
}

TEST_CASE("TakeSlab gives distinct slabs to threads taking them at once") {
  std::vector<void*> slabs(2 * 16);
  std::thread other([&] {
    for (size_t i = 0; i < 16; ++i) slabs[2 * i] = TakeSlab();
  });
  for (size_t i = 0; i < 16; ++i) slabs[2 * i + 1] = TakeSlab();
  other.join();
  for (size_t i = 0; i < slabs.size(); ++i) {
    REQUIRE(slabs[i] != nullptr);
    static_cast<char*>(slabs[i])[0] = static_cast<char>(i + 1);
  }
  for (size_t i = 0; i < slabs.size(); ++i) {
    CHECK(static_cast<char*>(slabs[i])[0] == static_cast<char>(i + 1));
    UnmapHuge(slabs[i], kSlab);
  }
}

TEST_CASE("TakeSlab maps its own slabs in a process that cannot start the helper") {
  // The child inherits this process's supply (its ready slabs, if any), but not its helper, or
  // starts a supply that cannot start one: either way it maps the slabs itself once the ready
  // ones are gone, and nothing makes more ready.
  const testing::ChildRun run = testing::RunWithoutThreads([](int out) {
    std::string result = "taken";
    for (int i = 0; i < 4; ++i) {
      void* slab = TakeSlab();
      static_cast<char*>(slab)[i] = 1;
      if (reinterpret_cast<uintptr_t>(slab) % kSlab != 0) result = "misaligned";
      UnmapHuge(slab, kSlab);
    }
    if (SlabsReady() != 0) result = "a helper made slabs ready";
    if (write(out, result.data(), result.size()) < 0) _exit(2);
  });
  CHECK(run.Exited(0));
  if (run.output == testing::kThreadStarted) {
    WARN("this system started a thread in a full address space; nothing to check");
    return;
  }
  CHECK(run.output == "taken");
}

TEST_CASE("A child forked after the helper started gets a helper of its own") {
  UnmapHuge(TakeSlab(), kSlab);  // this process's helper runs
  REQUIRE(WaitReady(2));
  const testing::ChildRun run = testing::RunInChild([](int out) {
    // The parent's ready slabs are not this process's supply: its first slab starts its own
    // helper, which makes two ready.
    void* slab = TakeSlab();
    const std::string result = WaitReady(2) ? "ready" : "no helper";
    UnmapHuge(slab, kSlab);
    if (write(out, result.data(), result.size()) < 0) _exit(2);
  });
  CHECK(run.Exited(0));
  CHECK(run.output == "ready");
}

}  // namespace
}  // namespace ptprof
