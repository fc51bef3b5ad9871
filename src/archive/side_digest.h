#pragma once
// SideDigest answers "what is the SHA-256 of these pieces?" on a thread of its own, while the
// caller goes on producing the next piece. Opening an archive decompresses each member and checks
// its digest; for a large trace member the digest took as long as the decompression and the
// write together (88 MB: 71 ms of the 120 ms an archive took to open, on one thread, before any
// decoding thread could start). With the digest beside it, the opening takes the longer of the
// two instead of their sum.
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <span>
#include <thread>

#include "src/archive/sha256.h"

namespace ptprof::archive {

class SideDigest {
 public:
  SideDigest();
  ~SideDigest();  // waits for the piece in hand, if any
  SideDigest(const SideDigest&) = delete;
  SideDigest& operator=(const SideDigest&) = delete;

  // Hands `piece` over, after the digest has taken the previous one: the caller must leave
  // `piece` unchanged until its next call of Add or Finish returns, and may change the
  // previous piece as soon as this call returns.
  void Add(std::span<const uint8_t> piece);
  // The digest of every piece added, in order (the object is then spent).
  Sha256::Digest Finish();

  // Whether a member of `bytes` is better digested beside its decompression: large enough that
  // the hand-overs cost nothing beside it, on a machine with a second CPU.
  static bool Worthwhile(uint64_t bytes);

 private:
  void Wait(std::unique_lock<std::mutex>& lock);
  void Run();

  Sha256 sha_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::span<const uint8_t> pending_;  // handed over, not yet digested
  bool busy_ = false;
  bool stop_ = false;
  std::thread thread_;  // last: starts once the rest is built
};

}  // namespace ptprof::archive
