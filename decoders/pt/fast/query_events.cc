// QueryDecoder's packets that make or complete events: TIP, TNT, TIP.PGE, TIP.PGD, FUP, PIP,
// OVF, MODE and PSBEND, with the look-ahead that errata BDM70 and overflows need.
#include "decoders/pt/fast/query_decoder.h"

#include <climits>

namespace ptprof::pt::fast {

int QueryDecoder::DecodeIp(int& size) {
  size = ReadNext();
  if (size < 0) return size;
  if (last_ip_.Update(packet_.ip) == LastIp::State::kBadCompression) return -pte_bad_packet;
  return 0;
}

int QueryDecoder::DecodeTip() {
  int size = 0;
  int status = DecodeIp(size);
  if (status < 0) return status;
  if (pt_event* ev = evq_.Dequeue(EventQueue::kAtTip)) {
    switch (ev->type) {
      case ptev_async_branch:
        consume_packet_ = true;
        EventIp(ev->variant.async_branch.to, *ev);
        break;
      case ptev_async_paging: EventIp(ev->variant.async_paging.ip, *ev); break;
      case ptev_async_vmcs: EventIp(ev->variant.async_vmcs.ip, *ev); break;
      case ptev_exec_mode: EventIp(ev->variant.exec_mode.ip, *ev); break;
      default: return -pte_bad_context;
    }
    event_ = ev;
    // Further events bind to this TIP; unless one consumed it, it stays for the branch query.
    if (evq_.Pending(EventQueue::kAtTip)) return 0;
    if (!consume_packet_) return 0;
    consume_packet_ = false;
  }
  pos_ += size;
  return 0;
}

int QueryDecoder::DecodeTnt() {
  const int size = ReadNext();
  if (size < 0) return size;
  if (tnt_index_) return -pte_bad_context;
  if (!packet_.tnt.bit_count) return -pte_bad_packet;
  tnt_bits_ = packet_.tnt.bits;
  tnt_index_ = uint64_t{1} << (packet_.tnt.bit_count - 1);
  pos_ += size;
  return 0;
}

int QueryDecoder::DecodeTipPge() {
  int size = 0;
  int status = DecodeIp(size);
  if (status < 0) return status;
  pt_event* ev = nullptr;
  if (!consume_packet_) {
    // The enable event comes first; events bound to this TIP.PGE follow.
    ev = evq_.Standalone();
    ev->type = ptev_enabled;
    if (QueryLastIp(&ev->variant.enabled.ip) < 0) return -pte_bad_packet;
    StampEvent(*ev);
    // TNT bits left over from before the disable would put the caller out of step.
    tnt_bits_ = 0;
    tnt_index_ = 0;
    consume_packet_ = true;
    enabled_ = true;
  } else {
    ev = evq_.Dequeue(EventQueue::kAtTip);
    if (ev) {
      if (ev->type != ptev_exec_mode) return -pte_bad_context;
      EventIp(ev->variant.exec_mode.ip, *ev);
    }
  }
  if (!ev) return -pte_internal;
  event_ = ev;
  if (evq_.Pending(EventQueue::kAtTip)) return 0;
  if (!consume_packet_) return -pte_internal;
  consume_packet_ = false;
  pos_ += size;
  return 0;
}

int QueryDecoder::DecodeTipPgd() {
  int size = 0;
  int status = DecodeIp(size);
  if (status < 0) return status;
  pt_event* ev = evq_.Dequeue(EventQueue::kAtTip);
  if (ev) {
    switch (ev->type) {
      case ptev_async_branch: {
        // An asynchronous branch whose target is a disable becomes an asynchronous disable.
        const uint64_t at = ev->variant.async_branch.from;
        ev->type = ptev_async_disabled;
        ev->variant.async_disabled.at = at;
        EventIp(ev->variant.async_disabled.ip, *ev);
        break;
      }
      case ptev_async_paging:
      case ptev_async_vmcs:
      case ptev_exec_mode:
        // Applied while tracing is off: no IP to give them.
        ev->ip_suppressed = 1;
        break;
      default: return -pte_bad_context;
    }
  } else {
    ev = evq_.Standalone();
    ev->type = ptev_disabled;
    EventIp(ev->variant.disabled.ip, *ev);
    StampEvent(*ev);
  }
  event_ = ev;
  if (evq_.Pending(EventQueue::kAtTip)) return 0;
  enabled_ = false;
  pos_ += size;
  return 0;
}

int QueryDecoder::DecodeFup() {
  int size = 0;
  int status = DecodeIp(size);
  if (status < 0) return status;
  if (pt_event* ev = evq_.Dequeue(EventQueue::kAtFup)) {
    switch (ev->type) {
      case ptev_overflow:
        consume_packet_ = true;
        status = QueryLastIp(&ev->variant.overflow.ip);
        if (status < 0) return status;
        break;
      case ptev_tsx:
        // An abort's FUP also starts the asynchronous branch to the abort handler.
        if (!ev->variant.tsx.aborted) consume_packet_ = true;
        EventIp(ev->variant.tsx.ip, *ev);
        break;
      default: return -pte_internal;
    }
    event_ = ev;
    if (evq_.Pending(EventQueue::kAtFup)) return 0;
    if (!consume_packet_) return 0;
    consume_packet_ = false;
  } else {
    // A FUP on its own is the source of an asynchronous branch; the TIP after it the target.
    uint64_t ip = 0;
    status = QueryLastIp(&ip);
    if (status < 0) return status;
    pt_event* branch = evq_.Enqueue(EventQueue::kAtTip);
    if (!branch) return -pte_nomem;
    branch->type = ptev_async_branch;
    branch->variant.async_branch.from = ip;
    StampEvent(*branch);
  }
  pos_ += size;
  return 0;
}

// The packet at `pos` as libipt's packet decoder reads it (the look-ahead of BDM70 and overflows
// uses one): its size, with `kind` kInvalid for a TMA that SKZ84 corrupted.
int QueryDecoder::ScanPacket(const uint8_t* pos, PacketKind& kind) const {
  int status = FetchKind(pos, begin_, end_, kind);
  if (status < 0) return status;
  Packet packet;
  status = ReadPacket(kind, pos, end_, packet);
  if (status == -pte_bad_packet && kind == PacketKind::kTma && errata_.skz84) {
    kind = PacketKind::kInvalid;
    return kTmaSize + 1;
  }
  return status;
}

// BDM70: a PSB+ while tracing is off may hold a FUP that belongs to the TIP.PGE after it. It
// does when only status packets lie between the PSBEND and that TIP.PGE.
int QueryDecoder::FupBelongsToNextEnable(const uint8_t* pos) const {
  for (;;) {
    PacketKind kind;
    const int status = ScanPacket(pos, kind);
    if (status < 0) return status == -pte_eos ? 0 : status;
    pos += status;
    switch (kind) {
      case PacketKind::kTipPge: return 1;
      case PacketKind::kPad:
      case PacketKind::kTsc:
      case PacketKind::kCbr:
      case PacketKind::kPsbEnd:
      case PacketKind::kPip:
      case PacketKind::kMode:
      case PacketKind::kVmcs:
      case PacketKind::kTma:
      case PacketKind::kMtc:
      case PacketKind::kCyc:
      case PacketKind::kMnt: continue;
      default: return 0;
    }
  }
}

int QueryDecoder::HeaderFup() {
  int size = ReadNext();
  if (size < 0) return size;
  if (errata_.bdm70 && !enabled_) {
    const int belongs = FupBelongsToNextEnable(pos_ + size);
    if (belongs < 0) return belongs;
    if (belongs) {
      pos_ += size;
      return 0;
    }
  }
  const int status = DecodeIp(size);
  if (status < 0) return status;
  if (packet_.ip.ipc != IpCompression::kSuppressed) enabled_ = true;
  pos_ += size;
  return 0;
}

namespace {

// A PIP's event: a CR3 change now (paging) or where an asynchronous branch lands (async_paging).
void SetPaging(pt_event& ev, pt_event_type type, const Packet& pip) {
  ev.type = type;
  // paging and async_paging lay out cr3 and non_root alike.
  ev.variant.async_paging.cr3 = pip.cr3;
  ev.variant.async_paging.non_root = pip.pip_nr ? 1 : 0;
}

// A MODE packet's event: exec mode or TSX state.
void SetMode(pt_event& ev, const ModePayload& mode) {
  if (mode.leaf == kModeLeafExec) {
    ev.type = ptev_exec_mode;
    ev.variant.exec_mode.mode = ExecModeOfPayload(mode);
  } else {
    ev.type = ptev_tsx;
    ev.variant.tsx.speculative = mode.intx ? 1 : 0;
    ev.variant.tsx.aborted = mode.abrt ? 1 : 0;
  }
}

}  // namespace

int QueryDecoder::DecodePip() {
  const int size = ReadNext();
  if (size < 0) return size;
  pt_event* ev = nullptr;
  if (!evq_.Find(EventQueue::kAtTip, ptev_async_branch)) {
    ev = evq_.Standalone();
    SetPaging(*ev, ptev_paging, packet_);
    event_ = ev;
  } else {
    // With an asynchronous branch in flight, the CR3 changes where that branch lands.
    ev = evq_.Enqueue(EventQueue::kAtTip);
    if (!ev) return -pte_nomem;
    SetPaging(*ev, ptev_async_paging, packet_);
  }
  StampEvent(*ev);
  pos_ += size;
  return 0;
}

int QueryDecoder::HeaderPip() {
  const int size = ReadNext();
  if (size < 0) return size;
  pt_event* ev = evq_.Enqueue(EventQueue::kAtPsbEnd);
  if (!ev) return -pte_nomem;
  SetPaging(*ev, ptev_async_paging, packet_);
  pos_ += size;
  return 0;
}

int QueryDecoder::ProcessPendingPsbEvents() {
  pt_event* ev = evq_.Dequeue(EventQueue::kAtPsbEnd);
  if (!ev) return 0;
  ev->status_update = 1;
  StampEvent(*ev);
  switch (ev->type) {
    case ptev_async_paging: EventIp(ev->variant.async_paging.ip, *ev); break;
    case ptev_exec_mode: EventIp(ev->variant.exec_mode.ip, *ev); break;
    case ptev_tsx: EventIp(ev->variant.tsx.ip, *ev); break;
    case ptev_async_vmcs: EventIp(ev->variant.async_vmcs.ip, *ev); break;
    case ptev_cbr: break;
    case ptev_mnt: ev->status_update = 0; break;  // maintenance is news even in PSB+
    default: return -pte_internal;
  }
  event_ = ev;
  return 1;
}

int QueryDecoder::DecodePsbEnd() {
  const int status = ProcessPendingPsbEvents();
  if (status < 0) return status;
  if (status) return 0;
  pos_ += kPsbEndSize;
  return 0;
}

// Which packet an overflow binds to: the relative offset just past a FUP (tracing resumed
// enabled), 0 when another packet says tracing resumed disabled, or an error.
int QueryDecoder::FindOvfFup() const {
  const uint8_t* pos = pos_;
  for (;;) {
    PacketKind kind;
    const int size = ScanPacket(pos, kind);
    if (size < 0) return size;
    pos += size;
    switch (kind) {
      case PacketKind::kFup: {
        const ptrdiff_t offset = pos - pos_;
        if (offset <= 0) return -pte_overflow;
        if (offset > INT_MAX) return -pte_overflow;
        return static_cast<int>(offset);
      }
      case PacketKind::kPad:
      case PacketKind::kMnt:
      case PacketKind::kCbr:
      case PacketKind::kTsc:
      case PacketKind::kTma:
      case PacketKind::kMtc:
      case PacketKind::kCyc: continue;
      case PacketKind::kPsbEnd:
      case PacketKind::kTip:
      case PacketKind::kTipPgd:
      case PacketKind::kTnt8:
      case PacketKind::kTnt64: return -pte_bad_context;
      case PacketKind::kInvalid: return -pte_bad_opc;
      default: return 0;
    }
  }
}

int QueryDecoder::DecodeOvf() {
  int status = ProcessPendingPsbEvents();
  if (status < 0) return status;
  if (status) return 0;
  // Everything but the time is reset.
  const TimeTracker time = time_;
  Reset();
  time_ = time;
  pos_ += kOvfSize;
  const int offset = FindOvfFup();
  if (offset <= 0) {
    if (errata_.skd010) return Unsupported("an overflow under erratum SKD010");
    if (errata_.apl11 && offset == -pte_bad_context)
      return Unsupported("an overflow under erratum APL11");
    if (offset < 0 && offset != -pte_eos) return offset;
    // Tracing was off when the overflow resolved.
    pt_event* ev = evq_.Standalone();
    ev->type = ptev_overflow;
    ev->ip_suppressed = 1;
    enabled_ = false;
    event_ = ev;
    StampEvent(*ev);
    return 0;
  }
  if (errata_.apl12) return Unsupported("an overflow under erratum APL12");
  pt_event* ev = evq_.Enqueue(EventQueue::kAtFup);
  if (!ev) return -pte_internal;
  ev->type = ptev_overflow;
  enabled_ = true;
  StampEvent(*ev);
  return 0;
}

int QueryDecoder::DecodeMode() {
  const int size = ReadNext();
  if (size < 0) return size;
  const ModePayload& mode = packet_.mode;
  pt_event* ev = nullptr;
  if (mode.leaf == kModeLeafExec) {
    // MODE.exec binds to the next TIP.
    ev = evq_.Enqueue(EventQueue::kAtTip);
    if (!ev) return -pte_nomem;
  } else if (!enabled_) {
    // MODE.TSX while tracing is off stands alone, without an IP.
    ev = evq_.Standalone();
    ev->variant.tsx.ip = 0;
    ev->ip_suppressed = 1;
    event_ = ev;
  } else {
    ev = evq_.Enqueue(EventQueue::kAtFup);  // else it binds to the next FUP
    if (!ev) return -pte_nomem;
  }
  SetMode(*ev, mode);
  StampEvent(*ev);
  pos_ += size;
  return 0;
}

int QueryDecoder::HeaderMode() {
  const int size = ReadNext();
  if (size < 0) return size;
  pt_event* ev = evq_.Enqueue(EventQueue::kAtPsbEnd);
  if (!ev) return -pte_nomem;
  SetMode(*ev, packet_.mode);
  pos_ += size;
  return 0;
}

}  // namespace ptprof::pt::fast
