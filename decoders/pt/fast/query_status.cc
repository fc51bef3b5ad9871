// QueryDecoder's timing, status and power packets: TSC, CBR, TMA, MTC, CYC, STOP, MNT, PWRE and
// PWRX.
#include "decoders/pt/fast/query_decoder.h"

namespace ptprof::pt::fast {

namespace {

// The query decoder ignores configuration errors in timing: they only make time imprecise.
int TimingResult(TimeStatus status) {
  if (status == TimeStatus::kOk || status == TimeStatus::kBadConfig) return 0;
  return LibiptErrorOf(status);
}

}  // namespace

int QueryDecoder::DecodeTsc(bool in_header) {
  const int size = ReadNext();
  if (size < 0) return size;
  int status = TimingResult(tcal_.OnTsc(packet_.tsc, in_header));
  if (status < 0) return status;
  status = TimingResult(time_.OnTsc(packet_.tsc));
  if (status < 0) return status;
  pos_ += size;
  return 0;
}

// An event of `type` a PSB+ header reports at its PSBEND (queued, timed there), or one published
// at once with the time now; null when the queue is full.
pt_event* QueryDecoder::StatusEvent(bool in_header, pt_event_type type) {
  pt_event* ev = nullptr;
  if (in_header) {
    ev = evq_.Enqueue(EventQueue::kAtPsbEnd);
    if (!ev) return nullptr;
  } else {
    ev = event_ = evq_.Standalone();
    StampEvent(*ev);
  }
  ev->type = type;
  return ev;
}

int QueryDecoder::DecodeCbr(bool in_header) {
  const int size = ReadNext();
  if (size < 0) return size;
  int status = TimingResult(tcal_.OnCbr(packet_.cbr_ratio, in_header));
  if (status < 0) return status;
  status = TimingResult(time_.OnCbr(packet_.cbr_ratio));
  if (status < 0) return status;
  pt_event* ev = StatusEvent(in_header, ptev_cbr);
  if (!ev) return -pte_nomem;
  ev->variant.cbr.ratio = packet_.cbr_ratio;
  pos_ += size;
  return 0;
}

int QueryDecoder::DecodeTma() {
  const int size = ReadNext();
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
  // Read here (as ReadPacket would: two bytes, the CTC in the second): the most frequent
  // packet after TNT in a trace with MTC.
  if (end_ - pos_ < 2) return -pte_eos;
  const uint8_t ctc = pos_[1];
  int status = TimingResult(tcal_.OnMtc(ctc));
  if (status < 0) return status;
  status = TimingResult(time_.OnMtc(ctc));
  if (status < 0) return status;
  pos_ += 2;
  return 0;
}

int QueryDecoder::DecodeCyc() {
  const int size = ReadNext();
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
  StatusEvent(false, ptev_stop);
  pos_ += kStopSize;
  return 0;
}

int QueryDecoder::DecodeMnt(bool in_header) {
  const int size = ReadNext();
  if (size < 0) return size;
  pt_event* ev = StatusEvent(in_header, ptev_mnt);
  if (!ev) return -pte_nomem;
  ev->variant.mnt.payload = packet_.mnt;
  pos_ += size;
  return 0;
}

int QueryDecoder::DecodePower() {
  const int size = ReadNext();
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
