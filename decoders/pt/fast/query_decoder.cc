#include "decoders/pt/fast/query_decoder.h"

#include <climits>

namespace ptprof::pt::fast {

namespace {

constexpr int kPsbEndSize = 2;
constexpr int kOvfSize = 2;
constexpr int kStopSize = 2;
constexpr int kTmaSize = 7;

// The query decoder ignores configuration errors in timing: they only make time imprecise.
int TimingResult(TimeStatus status) {
  return status == TimeStatus::kBadConfig ? 0 : LibiptErrorOf(status);
}

TimingParams TimingOf(const pt_config& config) {
  TimingParams timing;
  timing.mtc_freq = config.mtc_freq;
  timing.nom_freq = config.nom_freq;
  timing.cpuid_0x15_eax = config.cpuid_0x15_eax;
  timing.cpuid_0x15_ebx = config.cpuid_0x15_ebx;
  timing.skl168 = config.errata.skl168 != 0;
  return timing;
}

}  // namespace

// --- the event queue ---

pt_event* QueryDecoder::EventQueue::Enqueue(Binding b) {
  const uint8_t index = end_[b];
  const uint8_t end = static_cast<uint8_t>((index + 1) % kSlots);
  const uint8_t gap = static_cast<uint8_t>((end + 1) % kSlots);
  if (begin_[b] == gap) return nullptr;
  end_[b] = end;
  pt_event* event = &queue_[b][index];
  std::memset(event, 0, sizeof *event);
  return event;
}

pt_event* QueryDecoder::EventQueue::Dequeue(Binding b) {
  const uint8_t begin = begin_[b];
  if (begin == end_[b]) return nullptr;
  begin_[b] = static_cast<uint8_t>((begin + 1) % kSlots);
  return &queue_[b][begin];
}

pt_event* QueryDecoder::EventQueue::Find(Binding b, pt_event_type type) {
  for (uint8_t i = begin_[b]; i != end_[b]; i = static_cast<uint8_t>((i + 1) % kSlots)) {
    if (queue_[b][i].type == type) return &queue_[b][i];
  }
  return nullptr;
}

// --- state ---

QueryDecoder::QueryDecoder(const pt_config& config)
    : begin_(config.begin),
      end_(config.end),
      errata_(config.errata),
      decode_callback_(config.decode.callback != nullptr),
      timing_(TimingOf(config)),
      time_(timing_),
      tcal_(timing_) {
  evq_.Reset();
}

int QueryDecoder::Unsupported(const char* why) {
  if (why_.empty()) why_ = why;
  return kUnsupported;
}

void QueryDecoder::Reset() {
  enabled_ = false;
  consume_packet_ = false;
  event_ = nullptr;
  last_ip_ = 0;
  have_ip_ = false;
  ip_suppressed_ = false;
  tnt_bits_ = 0;
  tnt_index_ = 0;
  time_.Reset();
  last_tsc_ = 0;
  last_have_tsc_ = false;
  tcal_.Reset();
  evq_.Reset();
}

int QueryDecoder::EventIp(uint64_t& field, pt_event& event) const {
  if (QueryLastIp(&field) < 0) event.ip_suppressed = 1;
  return 0;
}

void QueryDecoder::StampEvent(pt_event& event) const {
  uint64_t tsc = 0;
  const bool known = time_.Query(tsc) == TimeStatus::kOk;
  event.tsc = tsc;
  event.lost_mtc = time_.lost_mtc();
  event.lost_cyc = time_.lost_cyc();
  if (known) event.has_tsc = 1;
}

// --- what the next packet means for the questions asked ---

int QueryDecoder::WillEvent() const {
  if (!HaveNext()) return 0;
  const uint8_t role = RoleOf(next_);
  if (role & kRoleEvent) return 1;
  if (role & kRolePsbEnd) return evq_.Pending(EventQueue::kAtPsbEnd);
  if (role & kRoleTip) return evq_.Pending(EventQueue::kAtTip);
  if (role & kRoleFup) return evq_.Pending(EventQueue::kAtFup);
  return 0;
}

bool QueryDecoder::WillEos() const {
  if (HaveNext()) return false;
  PacketKind kind;
  return FetchKind(pos_, begin_, end_, kind) == -pte_eos;
}

int QueryDecoder::PendingFlags() const {
  int flags = 0;
  // Events wait until the TNT bits before them are used up.
  if (tnt_index_ == 0) {
    if (WillEvent()) flags |= pts_event_pending;
    if (WillEos()) flags |= pts_eos;
  }
  return flags;
}

int QueryDecoder::ProvokeFetchError() const {
  PacketKind kind;
  const int status = FetchKind(pos_, begin_, end_, kind);
  return status < 0 ? status : -pte_internal;
}

int QueryDecoder::ReadAhead() {
  for (;;) {
    int status = Fetch();
    if (status) return status;
    if (RoleOf(next_) & (kRoleTip | kRoleTnt)) return 0;
    if (WillEvent()) return 0;
    status = Decode();
    if (status) {
      // A status packet cut by the end of the trace: move past it, nothing is next.
      if (status == -pte_eos) {
        pos_ = end_;
        next_ = PacketKind::kInvalid;
      }
      return status;
    }
  }
}

int QueryDecoder::Start(const uint8_t* pos, uint64_t* ip) {
  Reset();
  sync_ = pos;
  pos_ = pos;
  int status = Fetch();
  if (status) return status;
  if (next_ != PacketKind::kPsb) return -pte_nosync;
  status = DecodePsb();
  if (status < 0) return status;
  // The start IP before reading ahead, which may read an adjacent PSB+ that changes it.
  if (ip && QueryLastIp(ip) == 0) ip = nullptr;
  status = ReadAhead();
  if (status < 0) return status;
  int flags = StatusFlags();
  if (QueryLastIp(ip) < 0 && ip) flags |= pts_ip_suppressed;
  return flags;
}

int QueryDecoder::SyncForward(uint64_t* ip) {
  if (decode_callback_) return Unsupported("a decode callback for unknown packets");
  const uint8_t* pos = pos_ ? pos_ : begin_;
  if (pos == sync_) pos += kPsbSize;
  if (pos < begin_) return -pte_internal;
  // Start a little earlier to find a PSB the previous packet partly consumed.
  ptrdiff_t space = pos - begin_;
  if (space >= kPsbSize) space = kPsbSize - 1;
  pos -= space;
  const uint8_t* sync = nullptr;
  const int status = FindPsbForward(pos, begin_, end_, sync);
  if (status < 0) return status;
  return Start(sync, ip);
}

// --- the questions ---

int QueryDecoder::CacheTnt() {
  for (;;) {
    if (!HaveNext()) return ProvokeFetchError();
    if (WillEvent()) return -pte_bad_query;
    if (RoleOf(next_) & kRoleTip) return -pte_bad_query;
    event_ = nullptr;
    const PacketKind kind = next_;
    int status = Decode();
    if (status) return status;
    if (event_) return -pte_event_ignored;
    if (RoleOf(kind) & kRoleTnt) break;
    status = ReadAhead();
    if (status) return status;
  }
  // The time at the TNT packet, before reading on.
  last_have_tsc_ = time_.Query(last_tsc_) == TimeStatus::kOk;
  const int status = ReadAhead();
  if (status < 0 && status != -pte_eos) return status;
  return 0;
}

int QueryDecoder::SlowIndirectBranch(uint64_t* ip) {
  int flags = 0;
  for (;;) {
    if (!HaveNext()) return ProvokeFetchError();
    if (WillEvent()) return -pte_bad_query;
    event_ = nullptr;
    const PacketKind kind = next_;
    // A TNT here with bits still cached means the caller lost its way.
    if ((RoleOf(kind) & kRoleTnt) && tnt_index_ != 0) return -pte_bad_query;
    int status = Decode();
    if (status) return status;
    if (event_) return -pte_event_ignored;
    if (RoleOf(kind) & kRoleTip) {
      uint64_t target = 0;
      if (QueryLastIp(&target) < 0) flags |= pts_ip_suppressed;
      else *ip = target;
      break;
    }
    status = ReadAhead();
    if (status) return status;
  }
  last_have_tsc_ = time_.Query(last_tsc_) == TimeStatus::kOk;
  const int status = ReadAhead();
  if (status < 0 && status != -pte_eos) return status;
  return flags | StatusFlags();
}

int QueryDecoder::Event(pt_event* event) {
  if (tnt_index_ != 0) return -pte_bad_query;
  for (;;) {
    if (!HaveNext()) return ProvokeFetchError();
    if ((RoleOf(next_) & (kRoleTip | kRoleTnt)) && !WillEvent()) return -pte_bad_query;
    event_ = nullptr;
    int status = Decode();
    if (status) return status;
    if (event_) {
      *event = *event_;
      break;
    }
    status = ReadAhead();
    if (status) return status;
  }
  last_have_tsc_ = time_.Query(last_tsc_) == TimeStatus::kOk;
  const int status = ReadAhead();
  if (status < 0 && status != -pte_eos) return status;
  return StatusFlags();
}

// --- the decoder functions ---

int QueryDecoder::Decode() {
  switch (next_) {
    case PacketKind::kPad: pos_ += 1; return 0;
    case PacketKind::kPsb: return DecodePsb();
    case PacketKind::kTip: return DecodeTip();
    case PacketKind::kTnt8:
    case PacketKind::kTnt64: return DecodeTnt();
    case PacketKind::kTipPge: return DecodeTipPge();
    case PacketKind::kTipPgd: return DecodeTipPgd();
    case PacketKind::kFup: return DecodeFup();
    case PacketKind::kPip: return DecodePip();
    case PacketKind::kOvf: return DecodeOvf();
    case PacketKind::kMode: return DecodeMode();
    case PacketKind::kPsbEnd: return DecodePsbEnd();
    case PacketKind::kTsc: return DecodeTsc(false);
    case PacketKind::kCbr: return DecodeCbr(false);
    case PacketKind::kTma: return DecodeTma();
    case PacketKind::kMtc: return DecodeMtc();
    case PacketKind::kCyc: return DecodeCyc();
    case PacketKind::kStop: return DecodeStop();
    case PacketKind::kMnt: return DecodeMnt(false);
    case PacketKind::kPwre:
    case PacketKind::kPwrx: return DecodePower();
    case PacketKind::kVmcs: return Unsupported("a VMCS packet");
    case PacketKind::kExstop: return Unsupported("an EXSTOP packet");
    case PacketKind::kMwait: return Unsupported("an MWAIT packet");
    case PacketKind::kPtw: return Unsupported("a PTWRITE packet");
    case PacketKind::kUnknown:
      if (decode_callback_) return Unsupported("an unknown packet with a decode callback");
      return -pte_bad_opc;
    case PacketKind::kInvalid: return -pte_internal;
  }
  return -pte_internal;
}

int QueryDecoder::DecodeHeader() {
  switch (next_) {
    case PacketKind::kPad: pos_ += 1; return 0;
    case PacketKind::kFup: return HeaderFup();
    case PacketKind::kPip: return HeaderPip();
    case PacketKind::kMode: return HeaderMode();
    case PacketKind::kTsc: return DecodeTsc(true);
    case PacketKind::kCbr: return DecodeCbr(true);
    case PacketKind::kTma: return DecodeTma();
    case PacketKind::kMtc: return DecodeMtc();
    case PacketKind::kCyc: return DecodeCyc();
    case PacketKind::kMnt: return DecodeMnt(true);
    case PacketKind::kVmcs: return Unsupported("a VMCS packet");
    case PacketKind::kUnknown:
      if (decode_callback_) return Unsupported("an unknown packet with a decode callback");
      return -pte_bad_opc;
    default: return -pte_internal;
  }
}

int QueryDecoder::ReadPsbHeader() {
  last_ip_ = 0;
  have_ip_ = false;
  ip_suppressed_ = false;
  for (;;) {
    int status = Fetch();
    if (status) return status;
    if (RoleOf(next_) & kRolePsbEnd) return 0;
    if (!ReadInPsbHeader(next_)) return -pte_bad_context;
    status = DecodeHeader();
    if (status) return status;
  }
}

int QueryDecoder::DecodePsb() {
  const uint8_t* psb = pos_;
  const int size = ReadPsb(pos_, end_);
  if (size < 0) return size;
  if (const TimeStatus st = tcal_.OnPsb(); st != TimeStatus::kOk) return LibiptErrorOf(st);
  pos_ += size;
  const int status = ReadPsbHeader();
  if (status < 0) {
    // Back to the PSB, so that decoding may recover there.
    pos_ = psb;
    evq_.Clear(EventQueue::kAtPsbEnd);
    next_ = PacketKind::kPsb;
    return status;
  }
  // The next packet is the PSBEND, which publishes the events the header queued.
  return 0;
}

int QueryDecoder::DecodeIp(int& size) {
  size = ReadPacket(next_, pos_, end_, packet_);
  if (size < 0) return size;
  const IpPayload& ip = packet_.ip;
  switch (ip.ipc) {
    case IpCompression::kSuppressed: ip_suppressed_ = true; return 0;
    case IpCompression::kSignExtend48: last_ip_ = SignExtend(ip.ip, 48); break;
    case IpCompression::kUpdate16: last_ip_ = (last_ip_ & ~0xffffull) | (ip.ip & 0xffffull); break;
    case IpCompression::kUpdate32:
      last_ip_ = (last_ip_ & ~0xffffffffull) | (ip.ip & 0xffffffffull);
      break;
    case IpCompression::kUpdate48:
      last_ip_ = (last_ip_ & ~0xffffffffffffull) | (ip.ip & 0xffffffffffffull);
      break;
    case IpCompression::kFull: last_ip_ = ip.ip; break;
    default: return -pte_bad_packet;
  }
  have_ip_ = true;
  ip_suppressed_ = false;
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
  const int size = ReadPacket(next_, pos_, end_, packet_);
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
  int size = ReadPacket(next_, pos_, end_, packet_);
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
  const int size = ReadPacket(next_, pos_, end_, packet_);
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
  const int size = ReadPacket(next_, pos_, end_, packet_);
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
  const int size = ReadPacket(next_, pos_, end_, packet_);
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
  const int size = ReadPacket(next_, pos_, end_, packet_);
  if (size < 0) return size;
  pt_event* ev = evq_.Enqueue(EventQueue::kAtPsbEnd);
  if (!ev) return -pte_nomem;
  SetMode(*ev, packet_.mode);
  pos_ += size;
  return 0;
}

int QueryDecoder::DecodeTsc(bool in_header) {
  const int size = ReadPacket(next_, pos_, end_, packet_);
  if (size < 0) return size;
  int status = TimingResult(tcal_.OnTsc(packet_.tsc, in_header));
  if (status < 0) return status;
  status = TimingResult(time_.OnTsc(packet_.tsc));
  if (status < 0) return status;
  pos_ += size;
  return 0;
}

// An event a PSB+ header reports at its PSBEND (queued), or one published at once; null when the
// queue is full.
pt_event* QueryDecoder::HeaderOrStandalone(bool in_header) {
  if (in_header) return evq_.Enqueue(EventQueue::kAtPsbEnd);
  event_ = evq_.Standalone();
  return event_;
}

int QueryDecoder::DecodeCbr(bool in_header) {
  const int size = ReadPacket(next_, pos_, end_, packet_);
  if (size < 0) return size;
  int status = TimingResult(tcal_.OnCbr(packet_.cbr_ratio, in_header));
  if (status < 0) return status;
  status = TimingResult(time_.OnCbr(packet_.cbr_ratio));
  if (status < 0) return status;
  pt_event* ev = HeaderOrStandalone(in_header);
  if (!ev) return -pte_nomem;
  ev->type = ptev_cbr;
  ev->variant.cbr.ratio = packet_.cbr_ratio;
  if (!in_header) StampEvent(*ev);
  pos_ += size;
  return 0;
}

int QueryDecoder::DecodeTma() {
  const int size = ReadPacket(next_, pos_, end_, packet_);
  if (size < 0) {
    // SKZ84: TSC scaling or offsetting in VMX can corrupt TMA; reserved bits give it away.
    if (errata_.skz84 && size == -pte_bad_packet) {
      pos_ += kTmaSize + 1;
      return 0;
    }
    return size;
  }
  const int status = TimingResult(time_.OnTma(packet_.tma_ctc, packet_.tma_fc));
  if (status < 0) return status;
  pos_ += size;
  return 0;
}

int QueryDecoder::DecodeMtc() {
  const int size = ReadPacket(next_, pos_, end_, packet_);
  if (size < 0) return size;
  int status = TimingResult(tcal_.OnMtc(packet_.mtc_ctc));
  if (status < 0) return status;
  status = TimingResult(time_.OnMtc(packet_.mtc_ctc));
  if (status < 0) return status;
  pos_ += size;
  return 0;
}

int QueryDecoder::DecodeCyc() {
  const int size = ReadPacket(next_, pos_, end_, packet_);
  if (size < 0) return size;
  if (errata_.skd007 && size == 2) {
    // SKD007: a short CYC whose second byte looks like an extended opcode, followed by an OVF
    // opcode byte, is the start of an OVF: skip one byte and decode the OVF.
    const uint16_t payload = static_cast<uint16_t>(packet_.cyc);
    if ((payload & ~0x1f) == 0x20 && pos_ + size < end_ && pos_[size] == 0xf3) {
      pos_ += 1;
      return 0;
    }
  }
  int status = TimingResult(tcal_.OnCyc(packet_.cyc));
  if (status < 0) return status;
  uint64_t fcr = 0;
  if (const TimeStatus st = tcal_.Fcr(fcr); st != TimeStatus::kOk) {
    if (st != TimeStatus::kNoTime) return LibiptErrorOf(st);
    fcr = 0;  // uncalibrated: the time update counts this CYC as lost
  }
  status = TimingResult(time_.OnCyc(packet_.cyc, fcr));
  if (status < 0) return status;
  pos_ += size;
  return 0;
}

int QueryDecoder::DecodeStop() {
  pt_event* ev = evq_.Standalone();
  ev->type = ptev_stop;
  event_ = ev;
  StampEvent(*ev);
  pos_ += kStopSize;
  return 0;
}

int QueryDecoder::DecodeMnt(bool in_header) {
  const int size = ReadPacket(next_, pos_, end_, packet_);
  if (size < 0) return size;
  pt_event* ev = HeaderOrStandalone(in_header);
  if (!ev) return -pte_nomem;
  ev->type = ptev_mnt;
  ev->variant.mnt.payload = packet_.mnt;
  if (!in_header) StampEvent(*ev);
  pos_ += size;
  return 0;
}

int QueryDecoder::DecodePower() {
  const int size = ReadPacket(next_, pos_, end_, packet_);
  if (size < 0) return size;
  // Power events carry no time of their own in libipt 2.0.5.
  pt_event* ev = evq_.Standalone();
  if (next_ == PacketKind::kPwre) {
    ev->type = ptev_pwre;
    ev->variant.pwre.state = packet_.pwre.state;
    ev->variant.pwre.sub_state = packet_.pwre.sub_state;
    ev->variant.pwre.hw = packet_.pwre.hw ? 1 : 0;
  } else {
    ev->type = ptev_pwrx;
    ev->variant.pwrx.last = packet_.pwrx.last;
    ev->variant.pwrx.deepest = packet_.pwrx.deepest;
    ev->variant.pwrx.interrupt = packet_.pwrx.interrupt ? 1 : 0;
    ev->variant.pwrx.store = packet_.pwrx.store ? 1 : 0;
    ev->variant.pwrx.autonomous = packet_.pwrx.autonomous ? 1 : 0;
  }
  event_ = ev;
  pos_ += size;
  return 0;
}

}  // namespace ptprof::pt::fast
