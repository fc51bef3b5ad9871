#include "decoders/pt/packet_last_ip.h"

namespace ptprof::pt {

namespace {

// Replaces the low `bits` bits of `old_ip` with those of `update`.
uint64_t Merge(uint64_t old_ip, uint64_t update, unsigned bits) {
  const uint64_t low = (uint64_t{1} << bits) - 1;
  return (old_ip & ~low) | (update & low);
}

}  // namespace

LastIp::State LastIp::Update(const IpPayload& payload) {
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

LastIp::State LastIp::Query() const {
  if (!have_ip_) return State::kNone;
  if (suppressed_) return State::kSuppressed;
  return State::kValid;
}

}  // namespace ptprof::pt
