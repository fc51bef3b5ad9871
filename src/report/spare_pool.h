#pragma once
// SparePool keeps what one part of a writer is done with (a cache of lines, a buffer with its
// capacity) for the next part to take, on whichever thread: parts then start warm and write into
// memory already in use instead of allocating their own.
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <utility>
#include <vector>

namespace ptprof {

template <class T>
class SparePool {
 public:
  // A kept T, or `make()` when none is kept.
  template <class Make>
  T Take(Make&& make) {
    {
      std::lock_guard lock(mutex_);
      if (!kept_.empty()) {
        T spare = std::move(kept_.back());
        kept_.pop_back();
        return spare;
      }
    }
    return make();
  }
  // Keeps `spare` unless `most` are kept already.
  void Give(T spare, size_t most = SIZE_MAX) {
    std::lock_guard lock(mutex_);
    if (kept_.size() < most) kept_.push_back(std::move(spare));
  }

 private:
  std::mutex mutex_;
  std::vector<T> kept_;
};

}  // namespace ptprof
