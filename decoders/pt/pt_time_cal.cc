#include "decoders/pt/pt_time_cal.h"

namespace ptprof::pt {

namespace {

constexpr unsigned kTscBits = 56;
// A numerator must leave kFcrShift bits of headroom before it is shifted.
constexpr uint64_t kShiftableMask = ~(~uint64_t{0} >> kFcrShift);
// Cycles the CYC counter of SKL168-affected parts counts before it wraps, less some slack.
constexpr uint64_t kSkl168WrapCycles = 0xf00;

}  // namespace

TimeStatus TimeCalibration::SetFcr(uint64_t fcr) {
  fcr_ = fcr;
  if (fcr < min_fcr_) min_fcr_ = fcr;
  if (fcr > max_fcr_) max_fcr_ = fcr;
  return TimeStatus::kOk;
}

TimeStatus TimeCalibration::Fcr(uint64_t& fcr) const {
  if (!HaveFcr()) return TimeStatus::kNoTime;
  fcr = fcr_;
  return TimeStatus::kOk;
}

TimeStatus TimeCalibration::OnPsb() {
  if (params_.skl168) check_skl168_ = true;
  return TimeStatus::kOk;
}

TimeStatus TimeCalibration::OnTsc(uint64_t tsc, bool in_psb) {
  const uint64_t last_tsc = last_tsc_;
  const uint64_t cycles = cycles_since_tsc_;
  last_tsc_ = tsc;
  cycles_since_tsc_ = 0;
  // A TSC outside PSB+ may follow lost time; it only starts the next measurement.
  if (!in_psb || last_tsc == 0 || cycles == 0) return TimeStatus::kOk;
  // MTC measures more often and more precisely: it wins once seen.
  if (have_mtc_) return TimeStatus::kOk;
  if (tsc < last_tsc) {
    tsc += uint64_t{1} << kTscBits;
    if (tsc < last_tsc) return TimeStatus::kBadPacket;
  }
  const uint64_t delta = tsc - last_tsc;
  if (delta & kShiftableMask) return TimeStatus::kInternal;
  return SetFcr((delta << kFcrShift) / cycles);
}

TimeStatus TimeCalibration::OnCbr(uint8_t ratio, bool in_psb) {
  // A CBR outside PSB+ is a frequency change: earlier measurements no longer apply.
  if (!in_psb) Reset();
  if (params_.nom_freq == 0) return TimeStatus::kOk;
  if (ratio == 0) return TimeStatus::kBadPacket;
  return SetFcr((uint64_t{params_.nom_freq} << kFcrShift) / ratio);
}

TimeStatus TimeCalibration::OnMtc(uint8_t payload) {
  const uint32_t last_ctc = last_ctc_;
  const bool had_mtc = have_mtc_;
  const uint64_t cycles = cycles_since_mtc_;
  const bool check_skl168 = check_skl168_;
  check_skl168_ = false;  // only the first MTC after a PSB is suspect

  const uint32_t ctc =
      params_.mtc_freq >= 32 ? 0 : static_cast<uint32_t>(payload) << params_.mtc_freq;

  // A measurement needs two MTCs with cycles between them; without cycles, keep measuring from
  // the older MTC over the longer period.
  if (!had_mtc) {
    cycles_since_mtc_ = 0;
    last_ctc_ = ctc;
    have_mtc_ = true;
    return TimeStatus::kOk;
  }
  if (cycles == 0) return TimeStatus::kOk;

  cycles_since_mtc_ = 0;
  last_ctc_ = ctc;
  ++lost_mtc_;  // cleared again below once the ratio is updated

  uint32_t delta = 0;
  TimeStatus status = CtcDelta(ctc, last_ctc, params_, delta);
  if (status != TimeStatus::kOk) return status;
  uint64_t ticks = 0;
  status = ticks_.Convert(delta, params_, ticks);
  if (status != TimeStatus::kOk) return status;
  if (ticks & kShiftableMask) return TimeStatus::kInternal;
  const uint64_t fcr = (ticks << kFcrShift) / cycles;

  if (check_skl168) {
    // SKL168: CYC packets right before a PSB may be dropped. Skip this measurement if MTCs were
    // lost since the PSB, or if the cycle count looks one CYC-counter wrap short.
    const uint64_t mtc_period = params_.mtc_freq >= 32 ? 0 : (uint64_t{1} << params_.mtc_freq);
    if (mtc_period < delta) return TimeStatus::kOk;
    if (params_.mtc_freq < 10 && HaveFcr()) {
      const uint64_t expected = (fcr_ * (cycles + kSkl168WrapCycles)) >> kFcrShift;
      if (expected < ticks) return TimeStatus::kOk;
    }
  }

  SetFcr(fcr);
  lost_mtc_ = 0;
  return TimeStatus::kOk;
}

TimeStatus TimeCalibration::OnCyc(uint64_t cycles) {
  cycles_since_mtc_ += cycles;
  cycles_since_tsc_ += cycles;
  return TimeStatus::kOk;
}

}  // namespace ptprof::pt
