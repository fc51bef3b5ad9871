#include "src/model/slab_supply.h"

#include <pthread.h>
#include <sys/mman.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <new>
#include <thread>
#include <vector>

#include "src/model/huge_slabs.h"
#include "src/model/worker_threads.h"

namespace ptprof {

namespace {

constexpr size_t kSlab = HugeSlabs::kSlabBytes;

// The slabs made ready, and the helper that makes them. Lock-free, so that a child process
// forked while the helper works (which has no helper) still takes slabs: it maps its own.
class Supply {
 public:
  Supply() {
    std::vector<std::thread> helper;
    if (StartThreads(helper, 1, [this](unsigned) { Run(); }).count == 1) helper[0].detach();
  }

  void* Take() {
    // A slab given back first: its pages are in memory already, and nothing need be made ready.
    for (std::atomic<void*>& slot : kept_) {
      if (slot.load(std::memory_order_relaxed) == nullptr) continue;
      if (void* slab = slot.exchange(nullptr, std::memory_order_acquire)) return slab;
    }
    for (std::atomic<void*>& slot : ready_) {
      if (slot.load(std::memory_order_relaxed) == nullptr) continue;
      if (void* slab = slot.exchange(nullptr, std::memory_order_acquire)) {
        Wake();
        return slab;
      }
    }
    Wake();
    return MapHuge(kSlab);
  }

  // Keeps `slab` for the next Take; false when every slot is full.
  bool Keep(void* slab) {
    for (std::atomic<void*>& slot : kept_) {
      if (slot.load(std::memory_order_relaxed) != nullptr) continue;
      void* empty = nullptr;
      if (slot.compare_exchange_strong(empty, slab, std::memory_order_release,
                                       std::memory_order_relaxed))
        return true;
    }
    return false;
  }

  size_t Kept() const {
    size_t kept = 0;
    for (const std::atomic<void*>& slot : kept_) kept += slot.load() != nullptr;
    return kept;
  }

  size_t Ready() const {
    size_t ready = 0;
    for (const std::atomic<void*>& slot : ready_) ready += slot.load() != nullptr;
    return ready;
  }

 private:
  // Slabs kept ready: a decode that builds runs fast takes a slab every few ms.
  static constexpr size_t kReady = 2;

  void Wake() {
    taken_.fetch_add(1, std::memory_order_release);
    taken_.notify_one();
  }

  // Fills the empty slots, then sleeps until a slab is taken. Only this thread fills them.
  void Run() {
    uint64_t seen = taken_.load(std::memory_order_acquire);
    for (;;) {
      for (std::atomic<void*>& slot : ready_) {
        if (slot.load(std::memory_order_relaxed) != nullptr) continue;
        void* slab = nullptr;
        try {
          slab = MapHuge(kSlab);
        } catch (const std::bad_alloc&) {
          break;  // no memory now: the takers map their own (and find out)
        }
        FaultInForWriting(slab, kSlab);
        slot.store(slab, std::memory_order_release);
      }
      taken_.wait(seen, std::memory_order_acquire);
      seen = taken_.load(std::memory_order_acquire);
    }
  }

  std::array<std::atomic<void*>, kReady> ready_{};
  std::array<std::atomic<void*>, kKeptSlabs> kept_{};  // given back (GiveSlab), for reuse
  std::atomic<uint64_t> taken_{0};
};

// Made at the first slab and never destroyed: the detached helper may use it until the process
// ends. A child process forked after that has no helper: its first slab makes a supply of its
// own, with a helper (a benchmark's cold run in a fresh process then has one, as a command's
// decode does); the slabs the parent had ready stay mapped, unused, in the child. Made under a
// spin flag rather than a mutex, which a child forked while another thread held it could never
// take; the child clears both.
std::atomic<Supply*> the_supply{nullptr};
std::atomic<bool> making_supply{false};

Supply& TheSupply() {
  if (Supply* supply = the_supply.load(std::memory_order_acquire)) return *supply;
  while (making_supply.exchange(true, std::memory_order_acquire)) {
    if (Supply* supply = the_supply.load(std::memory_order_acquire)) return *supply;
    std::this_thread::yield();
  }
  Supply* supply = the_supply.load(std::memory_order_acquire);
  if (!supply) {
    static std::once_flag registered;
    std::call_once(registered, [] {
      pthread_atfork(nullptr, nullptr, [] {
        the_supply.store(nullptr, std::memory_order_relaxed);
        making_supply.store(false, std::memory_order_relaxed);
      });
    });
    supply = new Supply;
    the_supply.store(supply, std::memory_order_release);
  }
  making_supply.store(false, std::memory_order_release);
  return *supply;
}

}  // namespace

void* TakeSlab() { return TheSupply().Take(); }

void GiveSlab(void* slab) {
  if (slab && !TheSupply().Keep(slab)) UnmapHuge(slab, kSlab);
}

size_t SlabsKept() { return TheSupply().Kept(); }

size_t SlabsReady() { return TheSupply().Ready(); }

}  // namespace ptprof
