#include "src/archive/side_digest.h"

namespace ptprof::archive {

SideDigest::SideDigest() : thread_([this] { Run(); }) {}

SideDigest::~SideDigest() {
  {
    std::unique_lock<std::mutex> lock(mutex_);
    Wait(lock);
    stop_ = true;
  }
  changed_.notify_all();
  thread_.join();
}

void SideDigest::Wait(std::unique_lock<std::mutex>& lock) {
  changed_.wait(lock, [this] { return !busy_; });
}

void SideDigest::Add(std::span<const uint8_t> piece) {
  {
    std::unique_lock<std::mutex> lock(mutex_);
    Wait(lock);
    pending_ = piece;
    busy_ = true;
  }
  changed_.notify_all();
}

Sha256::Digest SideDigest::Finish() {
  std::unique_lock<std::mutex> lock(mutex_);
  Wait(lock);
  return sha_.Finish();
}

bool SideDigest::Worthwhile(uint64_t bytes) {
  return bytes >= (uint64_t{8} << 20) && std::thread::hardware_concurrency() > 1;
}

void SideDigest::Run() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    changed_.wait(lock, [this] { return busy_ || stop_; });
    if (!busy_) return;  // stopped with nothing in hand
    const std::span<const uint8_t> piece = pending_;
    lock.unlock();
    sha_.Update(piece);
    lock.lock();
    busy_ = false;
    changed_.notify_all();
  }
}

}  // namespace ptprof::archive
