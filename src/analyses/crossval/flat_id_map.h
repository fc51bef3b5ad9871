#pragma once
// FlatIdMap answers "which number did this key get?" for the caches FlowEdges asks at every branch
// it has not just seen follow the last one (tens of millions of times on a large program), and
// for the shared numbering behind them (EdgeTable, FlowEdges' ranges), taken under a lock: one
// array of slots, open addressing with linear probing, at most half full, so that a lookup is
// one multiply and usually one cache line, where a node-based map took a division and two or
// three dependent misses. Past 2 MiB the slots are in huge pages (src/model/huge_allocator.h):
// each thread's caches learn cc1's 111 K edges in memory fresh to them.
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "src/model/huge_allocator.h"

namespace ptprof {

template <typename Key, typename Hash>
class FlatIdMap {
 public:
  // The number kept for `key`, and whether it was added just now (then it is `fresh`). The
  // pointer stays valid until the next TryEmplace.
  std::pair<uint32_t*, bool> TryEmplace(const Key& key, uint32_t fresh) {
    if (slots_.empty()) slots_.resize(size_t{1} << kFirstBits);  // (none until the first key)
    for (size_t i = Home(key);; i = (i + 1) & mask_) {
      Slot& slot = slots_[i];
      if (!slot.used) {
        if ((count_ + 1) * 2 > slots_.size()) {
          Grow();
          return TryEmplace(key, fresh);
        }
        slot = {key, fresh, true};
        ++count_;
        return {&slot.value, true};
      }
      if (slot.key == key) return {&slot.value, false};
    }
  }
  // The number kept for `key`, or nullptr when it has none.
  const uint32_t* Find(const Key& key) const {
    if (slots_.empty()) return nullptr;
    for (size_t i = Home(key);; i = (i + 1) & mask_) {
      const Slot& slot = slots_[i];
      if (!slot.used) return nullptr;
      if (slot.key == key) return &slot.value;
    }
  }
  size_t size() const { return count_; }

 private:
  static constexpr unsigned kFirstBits = 10;
  struct Slot {
    Key key{};
    uint32_t value = 0;
    bool used = false;
  };
  size_t Home(const Key& key) const {
    return static_cast<size_t>((static_cast<uint64_t>(Hash{}(key)) * 0x9e3779b97f4a7c15ull) >>
                               shift_);
  }
  void Grow() {
    std::vector<Slot, HugeAllocator<Slot>> old = std::move(slots_);
    slots_.assign(old.size() * 2, Slot{});
    mask_ = slots_.size() - 1;
    --shift_;
    for (const Slot& slot : old) {
      if (!slot.used) continue;
      size_t i = Home(slot.key);
      while (slots_[i].used) i = (i + 1) & mask_;
      slots_[i] = slot;
    }
  }

  std::vector<Slot, HugeAllocator<Slot>> slots_;
  size_t mask_ = (size_t{1} << kFirstBits) - 1;
  unsigned shift_ = 64 - kFirstBits;
  size_t count_ = 0;
};

}  // namespace ptprof
