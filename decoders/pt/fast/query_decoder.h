#pragma once
// QueryDecoder answers the questions a block walker asks of an Intel PT trace ("was this
// conditional branch taken?", "where did this indirect branch go?", "which event comes next?",
// "what time is it?", "where in the trace are we?") the way libipt 2.0.5's query decoder answers
// them, bit for bit: the same read-ahead over timing packets, the same events bound to the same
// packets, the same time at each answer and the same offsets. It is ptprof's own code on the raw
// bytes (packet_scan.h), so the fast flow engine asks it without a library call per branch, and
// keeps the common answers inline (a TNT bit is a shift).
//
// What the fast engine never handles (VMCS, PTWRITE, EXSTOP and MWAIT packets, the overflow
// errata SKD010, APL11 and APL12, an unknown packet with a decode callback)
// makes it answer kUnsupported with the reason in why(): the caller then decodes with libipt.
// Errors carry libipt's codes (-pte_eos at the end, -pte_bad_query when asked out of turn, ...).
#include <intel-pt.h>

#include <cstdint>
#include <cstring>
#include <string>

#include "decoders/pt/fast/packet_scan.h"
#include "decoders/pt/packet_last_ip.h"
#include "decoders/pt/pt_time.h"
#include "decoders/pt/pt_time_cal.h"

namespace ptprof::pt::fast {

// An answer the fast engine cannot give (see why()).
inline constexpr int kUnsupported = -1000;

class QueryDecoder {
 public:
  // `config` as for libipt's query decoder: its buffer, errata and timing parameters.
  explicit QueryDecoder(const pt_config& config);

  // libipt's pt_qry_sync_forward, pt_qry_cond_branch, pt_qry_indirect_branch, pt_qry_event and
  // pt_qry_time: status flags (pts_*) or a negative error code.
  int SyncForward(uint64_t* ip);
  int CondBranch(int* taken) {
    if (tnt_index_ == 0) {
      const int status = CacheTnt();
      if (status < 0) return status;
    }
    *taken = (tnt_bits_ & tnt_index_) != 0;
    return TakeTntBits(1);
  }
  int IndirectBranch(uint64_t* ip) {
    if (next_ == PacketKind::kTip && !evq_.Pending(EventQueue::kAtTip)) {
      // The common case, inline: a TIP no event binds to.
      const int status = PlainTip(ip);
      if (status != kNotPlain) return status;
    }
    return SlowIndirectBranch(ip);
  }
  int Event(pt_event* event);
  int Time(uint64_t* tsc) const {
    *tsc = last_tsc_;
    return last_have_tsc_ ? 0 : -pte_no_time;
  }
  // Where the decoder stands (pt_qry_get_offset); only valid once synchronised.
  uint64_t Offset() const { return pos_ ? static_cast<uint64_t>(pos_ - begin_) : 0; }

  const std::string& why() const { return why_; }

  // For the engine's inner loop: whether TNT bits not yet asked for are cached.
  bool HasTntBits() const { return tnt_index_ != 0; }
  // Fills the TNT cache from the next TNT packet (what CondBranch does when it is empty).
  int RefillTnt() {
    if (next_ != PacketKind::kTnt8) return CacheTnt();
    // The common case, inline: a TNT-8 packet (its opcode is even and above 2, so it holds a
    // stop bit and at least one bit) and, after it, another.
    CacheTnt8(*pos_);
    ++pos_;
    return Answered();
  }
  // Whether a TNT-8 packet comes next (RefillTnt reads it inline).
  bool Tnt8Next() const { return next_ == PacketKind::kTnt8; }
  // Whether a TIP comes next (with no TNT bits pending, RefillTnt then answers -pte_bad_query).
  bool TipNext() const { return next_ == PacketKind::kTip; }
  // With no TNT bits pending and a TNT-8 packet next (Tnt8Next): the packet's byte.
  uint8_t NextTnt8() const { return *pos_; }
  // With no TNT bits pending and a TNT-8 packet next: RefillTnt, then, when no status follows
  // the packet's bits, TakeTntBits of them all, without working out what is pending in between.
  // 0: taken, and the status after them is 0. 1: the bits are pending, as RefillTnt leaves
  // them (a status follows them). Negative: RefillTnt's error, the bits pending.
  int TakeWholeTnt8() {
    const uint8_t byte = *pos_;
    ++pos_;
    const int answered = Answered();  // reads on past timing packets, never a TNT's bits
    if (answered == 0 && StatusAfterTaking(0) == 0) return 0;
    CacheTnt8(byte);
    return answered < 0 ? answered : 1;
  }
  // What TakeTntBits(n) would answer, without taking them: nothing is pending while TNT bits
  // are (events wait until the bits before them are used up), or when a TNT packet comes next.
  int StatusAfterTaking(uint32_t n) const {
    if ((tnt_index_ >> n) != 0 || next_ == PacketKind::kTnt8) return 0;
    // A TIP next (inline, FlagsOnceTntUsed's answer for it): an event only if one binds to it.
    if (next_ == PacketKind::kTip) return evq_.Pending(EventQueue::kAtTip) ? pts_event_pending : 0;
    return FlagsOnceTntUsed();
  }
  // How many TNT bits are pending, and their values (the next one is bit PendingBits() - 1).
  uint32_t PendingBits() const { return tnt_index_ ? 64 - __builtin_clzll(tnt_index_) : 0; }
  uint64_t PendingBitValues() const { return tnt_bits_; }
  // Takes `n` pending bits at once: the status flags, as CondBranch gives them after the last.
  int TakeTntBits(uint32_t n) {
    tnt_index_ >>= n;
    return tnt_index_ ? 0 : StatusFlags();
  }

 private:
  // Pending events, one FIFO per packet they bind to, as libipt keeps them (8 slots, one always
  // free so that the last event handed out stays valid).
  class EventQueue {
   public:
    enum Binding : uint8_t { kAtPsbEnd, kAtTip, kAtFup, kBindings };
    void Reset() { std::memset(this, 0, sizeof *this); }
    pt_event* Standalone() {
      std::memset(&standalone_, 0, sizeof standalone_);
      return &standalone_;
    }
    pt_event* Enqueue(Binding b);
    pt_event* Dequeue(Binding b);
    bool Pending(Binding b) const { return begin_[b] != end_[b]; }
    pt_event* Find(Binding b, pt_event_type type);
    void Clear(Binding b) { begin_[b] = end_[b] = 0; }

   private:
    static constexpr uint8_t kSlots = 8;
    pt_event queue_[kBindings][kSlots];
    uint8_t begin_[kBindings];
    uint8_t end_[kBindings];
    pt_event standalone_;
  };

  static constexpr int kPsbEndSize = 2;
  static constexpr int kOvfSize = 2;
  static constexpr int kStopSize = 2;
  static constexpr int kTmaSize = 7;

  int Unsupported(const char* why);
  void Reset();
  int Start(const uint8_t* pos, uint64_t* ip);
  int Fetch() { return FetchKindInline(pos_, begin_, end_, next_); }
  // Reads the packet at pos_ (of kind next_) into packet_: its size or an error code.
  int ReadNext() { return ReadPacket(next_, pos_, end_, packet_); }
  bool HaveNext() const { return next_ != PacketKind::kInvalid; }
  // Whether the next packet makes or completes an event (asked for every packet read ahead).
  int WillEvent() const {
    if (!HaveNext()) return 0;
    const uint8_t role = RoleOf(next_);
    if (role & kRoleEvent) return 1;
    if (role & kRolePsbEnd) return evq_.Pending(EventQueue::kAtPsbEnd);
    if (role & kRoleTip) return evq_.Pending(EventQueue::kAtTip);
    if (role & kRoleFup) return evq_.Pending(EventQueue::kAtFup);
    return 0;
  }
  bool WillEos() const;
  int StatusFlags() const { return StatusAfterTaking(0); }
  // The status flags once no TNT bits are pending: an event or the end of the trace next.
  int FlagsOnceTntUsed() const;
  int ProvokeFetchError() const;
  int ReadAhead();
  // After an answer: the time it was given at, then the read-ahead to the packet the next
  // question is about (the end of the trace is no error yet): 0 or an error code.
  int Answered() {
    last_have_tsc_ = time_.Query(last_tsc_) == TimeStatus::kOk;
    if (pos_ < end_ && (*pos_ & 1) == 0 && *pos_ > 2) {
      // The common case, inline: a TNT-8 packet (its opcode is even and above 2) comes next.
      next_ = PacketKind::kTnt8;
      return 0;
    }
    if (pos_ < end_ && (*pos_ & 0x1f) == 0x0d) {
      // The next most common, inline: a TIP (no other opcode has these low bits), where
      // ReadAhead stops at once.
      next_ = PacketKind::kTip;
      return 0;
    }
    const int status = ReadAhead();
    return status < 0 && status != -pte_eos ? status : 0;
  }
  int CacheTnt();
  // The bits of the TNT-8 packet whose byte is `byte` (even, above 2: a stop bit and at least
  // one bit under it) as the pending ones.
  void CacheTnt8(uint8_t byte) {
    const unsigned payload = byte >> 1;
    const int stop = 31 - __builtin_clz(payload);
    tnt_bits_ = payload & ~(1u << stop);
    tnt_index_ = uint64_t{1} << (stop - 1);
  }
  int SlowIndirectBranch(uint64_t* ip);
  // IndirectBranch for a TIP at pos_ that no event binds to; kNotPlain when it is not that simple
  // (nothing has changed then).
  static constexpr int kNotPlain = -2000;
  [[gnu::always_inline]] int PlainTip(uint64_t* ip) {
    const uint8_t ipc = *pos_ >> 5;
    const int payload = IpPayloadSize(ipc);
    if (payload < 0 || end_ - pos_ < 1 + payload) return kNotPlain;
    IpPayload tip;
    tip.ipc = static_cast<IpCompression>(ipc);
    if (end_ - pos_ > 8) {
      // One 8-byte load, whatever the payload's size: LastIp takes only the payload's bytes
      // of it. (Copying just those bytes calls memcpy, and reading them back as one number
      // then waits for the copy's narrow stores.)
      std::memcpy(&tip.ip, pos_ + 1, sizeof tip.ip);  // little-endian
    } else {
      tip.ip = 0;
      std::memcpy(&tip.ip, pos_ + 1, static_cast<size_t>(payload));
    }
    const LastIp::State state = last_ip_.Update(tip);
    pos_ += 1 + payload;
    // The state Update answers is what QueryLastIp would read back (the IP or no IP).
    int flags = 0;
    if (state == LastIp::State::kValid) {
      if (ip) *ip = last_ip_.Ip();
    } else {
      flags = QueryLastIp(ip) < 0 ? pts_ip_suppressed : 0;
    }
    const int status = Answered();
    if (status < 0) return status;
    return flags | StatusFlags();
  }

  // The decoder functions: what the packet at pos_ (of kind next_) does, outside and inside a
  // PSB+ header. Each returns 0 or an error code and moves pos_ past what it consumed.
  // Dispatch and PSB+ (query_decoder.cc):
  int Decode();
  int DecodeHeader();
  int DecodePsb();
  int ReadPsbHeader();
  // Packets that make or complete events (query_events.cc):
  int DecodeIp(int& size);
  int DecodeTip();
  int DecodeTnt();
  int DecodeTipPge();
  int DecodeTipPgd();
  int DecodeFup();
  int HeaderFup();
  int FupBelongsToNextEnable(const uint8_t* pos) const;
  int ScanPacket(const uint8_t* pos, PacketKind& kind) const;
  int DecodePip();
  int HeaderPip();
  int DecodeOvf();
  int FindOvfFup() const;
  int DecodeMode();
  int HeaderMode();
  int DecodePsbEnd();
  int ProcessPendingPsbEvents();
  // Timing, status and power packets (query_status.cc):
  pt_event* StatusEvent(bool in_header, pt_event_type type);
  int DecodeTsc(bool in_header);
  int DecodeCbr(bool in_header);
  int DecodeTma();
  int DecodeMtc();
  int DecodeCyc();
  int DecodeStop();
  int DecodeMnt(bool in_header);
  int DecodePower();

  // The IP of last_ip for an event's field: suppressed or missing IPs mark the event.
  int EventIp(uint64_t& field, pt_event& event) const;
  int QueryLastIp(uint64_t* ip) const {
    const LastIp::State state = last_ip_.Query();
    if (ip) *ip = state == LastIp::State::kValid ? last_ip_.Ip() : 0;
    if (state == LastIp::State::kNone) return -pte_noip;
    if (state == LastIp::State::kSuppressed) return -pte_ip_suppressed;
    return 0;
  }
  void StampEvent(pt_event& event) const;

  const uint8_t* begin_;
  const uint8_t* end_;
  const uint8_t* pos_ = nullptr;
  const uint8_t* sync_ = nullptr;
  PacketKind next_ = PacketKind::kInvalid;  // the packet at pos_; kInvalid: none fetched
  pt_errata errata_;
  bool decode_callback_ = false;
  TimingParams timing_;

  LastIp last_ip_;

  // The cached TNT bits: the next one is at tnt_index_ (0: empty).
  uint64_t tnt_bits_ = 0;
  uint64_t tnt_index_ = 0;

  TimeTracker time_;
  TimeCalibration tcal_;
  // The time at the last answer (libipt's last_time): all pt_qry_time reports of it.
  uint64_t last_tsc_ = 0;
  bool last_have_tsc_ = false;

  EventQueue evq_;
  pt_event* event_ = nullptr;  // the event the last decoder function published
  bool enabled_ = false;
  bool consume_packet_ = false;

  Packet packet_;  // scratch for the packet being decoded
  std::string why_;
};

}  // namespace ptprof::pt::fast
