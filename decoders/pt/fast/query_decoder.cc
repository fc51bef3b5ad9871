// QueryDecoder's state, its questions and read-ahead, synchronisation and the PSB+ header, and
// the dispatch to the decoder functions of query_events.cc and query_status.cc.
#include "decoders/pt/fast/query_decoder.h"

namespace ptprof::pt::fast {

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
      timing_(TimingParamsOf(config)),
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
  last_ip_.Reset();
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

bool QueryDecoder::WillEos() const {
  if (HaveNext()) return false;
  PacketKind kind;
  return FetchKind(pos_, begin_, end_, kind) == -pte_eos;
}

int QueryDecoder::FlagsOnceTntUsed() const {
  int flags = 0;
  if (WillEvent()) flags |= pts_event_pending;
  if (WillEos()) flags |= pts_eos;
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
  return Answered();  // the time at the TNT packet, before reading on
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
  const int status = Answered();
  if (status < 0) return status;
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
  const int status = Answered();
  if (status < 0) return status;
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
  last_ip_.Reset();
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

}  // namespace ptprof::pt::fast
