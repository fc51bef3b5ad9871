#pragma once
// LastIp answers "which full IP does this compressed IP packet stand for?". Intel PT IP packets
// carry only the bytes that changed since the previous IP packet (or a sign-extended 48-bit IP);
// LastIp keeps the running value, as a decoder must, to expand them. Inline: the fast query
// decoder updates it at every TIP.
#include <cstdint>

#include "decoders/pt/packet.h"

namespace ptprof::pt {

class LastIp {
 public:
  enum class State { kNone, kSuppressed, kValid, kBadCompression };

  // Applies one IP payload. kBadCompression (and no change) for a reserved compression code.
  // Only the payload's bytes of `payload.ip` count (the fast query decoder reads 8 bytes of the
  // trace at once, whatever the payload's size).
  State Update(const IpPayload& payload) {
    switch (payload.ipc) {
      case IpCompression::kSuppressed:
        // The IP is unknown for this packet; the last IP itself is kept for the next update.
        suppressed_ = true;
        return Query();
      case IpCompression::kUpdate16: ip_ = Merge(ip_, payload.ip, 16); break;
      case IpCompression::kUpdate32: ip_ = Merge(ip_, payload.ip, 32); break;
      case IpCompression::kUpdate48: ip_ = Merge(ip_, payload.ip, 48); break;
      case IpCompression::kSignExtend48: ip_ = SignExtend(payload.ip, 48); break;
      case IpCompression::kFull: ip_ = payload.ip; break;
      default: return State::kBadCompression;
    }
    have_ip_ = true;
    suppressed_ = false;
    return State::kValid;
  }

  // kNone before the first IP, kSuppressed after a suppressed IP, else kValid with Ip().
  State Query() const {
    if (!have_ip_) return State::kNone;
    if (suppressed_) return State::kSuppressed;
    return State::kValid;
  }
  uint64_t Ip() const { return ip_; }

  void Reset() { *this = LastIp(); }

 private:
  // Replaces the low `bits` bits of `old_ip` with those of `update`.
  static uint64_t Merge(uint64_t old_ip, uint64_t update, unsigned bits) {
    const uint64_t low = (uint64_t{1} << bits) - 1;
    return (old_ip & ~low) | (update & low);
  }

  uint64_t ip_ = 0;
  bool have_ip_ = false;
  bool suppressed_ = false;
};

}  // namespace ptprof::pt
