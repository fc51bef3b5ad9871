#pragma once
// LastIp answers "which full IP does this compressed IP packet stand for?". Intel PT IP packets
// carry only the bytes that changed since the previous IP packet (or a sign-extended 48-bit IP);
// LastIp keeps the running value, as a decoder must, to expand them.
#include <cstdint>

#include "decoders/pt/packet.h"

namespace ptprof::pt {

class LastIp {
 public:
  enum class State { kNone, kSuppressed, kValid, kBadCompression };

  // Applies one IP payload. kBadCompression (and no change) for a reserved compression code.
  State Update(const IpPayload& payload);

  // kNone before the first IP, kSuppressed after a suppressed IP, else kValid with Ip().
  State Query() const;
  uint64_t Ip() const { return ip_; }

  void Reset() { *this = LastIp(); }

 private:
  uint64_t ip_ = 0;
  bool have_ip_ = false;
  bool suppressed_ = false;
};

}  // namespace ptprof::pt
