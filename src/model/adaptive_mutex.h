#pragma once
// AdaptiveMutex: a mutex for a lock held a few hundred nanoseconds at a time that several decoding
// threads take often (the lookups of a table they share). A thread that finds it taken spins a
// little before it sleeps, where std::mutex puts it to sleep at once: a futex wait and a wake-up,
// which cost microseconds (more on a VM) for a lock that is free again within a fraction of one.
// (glibc's adaptive mutex type; elsewhere a plain one.) BasicLockable, for std::lock_guard.
#include <pthread.h>

namespace ptprof {

class AdaptiveMutex {
 public:
  AdaptiveMutex() {
    pthread_mutexattr_t attributes;
    pthread_mutexattr_init(&attributes);
#ifdef PTHREAD_ADAPTIVE_MUTEX_INITIALIZER_NP
    pthread_mutexattr_settype(&attributes, PTHREAD_MUTEX_ADAPTIVE_NP);
#endif
    pthread_mutex_init(&mutex_, &attributes);
    pthread_mutexattr_destroy(&attributes);
  }
  ~AdaptiveMutex() { pthread_mutex_destroy(&mutex_); }
  AdaptiveMutex(const AdaptiveMutex&) = delete;
  AdaptiveMutex& operator=(const AdaptiveMutex&) = delete;

  void lock() { pthread_mutex_lock(&mutex_); }
  bool try_lock() { return pthread_mutex_trylock(&mutex_) == 0; }
  void unlock() { pthread_mutex_unlock(&mutex_); }

 private:
  pthread_mutex_t mutex_;
};

}  // namespace ptprof
