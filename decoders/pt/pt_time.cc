#include "decoders/pt/pt_time.h"

#include <intel-pt.h>

#include "decoders/pt/packet_config.h"

namespace ptprof::pt {

namespace {

constexpr unsigned kMtcPayloadBits = 8;
constexpr unsigned kTmaCtcBits = 16;
constexpr uint32_t kTmaCtcMask = (1u << kTmaCtcBits) - 1;

// 2^bits as a 32-bit CTC quantity (0 when it does not fit).
uint32_t CtcPower(unsigned bits) { return bits >= 32 ? 0 : (1u << bits); }

uint32_t MtcCtc(uint8_t payload, uint8_t mtc_freq) {
  return mtc_freq >= 32 ? 0 : static_cast<uint32_t>(payload) << mtc_freq;
}

}  // namespace

int LibiptErrorOf(TimeStatus status) {
  switch (status) {
    case TimeStatus::kOk: return 0;
    case TimeStatus::kNoTime: return -pte_no_time;
    case TimeStatus::kBadContext: return -pte_bad_context;
    case TimeStatus::kBadPacket: return -pte_bad_packet;
    case TimeStatus::kBadConfig: return -pte_bad_config;
    case TimeStatus::kInternal: return -pte_internal;
  }
  return -pte_internal;
}

TimingParams TimingParamsFor(const PtParams& params) {
  // The errata table lives in libipt; a one-byte buffer is enough to ask it.
  const uint8_t dummy = 0;
  return TimingParamsOf(MakePtConfig(std::span<const uint8_t>(&dummy, 1), params));
}

TimingParams TimingParamsOf(const pt_config& config) {
  TimingParams timing;
  timing.mtc_freq = config.mtc_freq;
  timing.nom_freq = config.nom_freq;
  timing.cpuid_0x15_eax = config.cpuid_0x15_eax;
  timing.cpuid_0x15_ebx = config.cpuid_0x15_ebx;
  timing.skl168 = config.errata.skl168 != 0;
  return timing;
}

TimeStatus CtcDelta(uint32_t ctc, uint32_t last_ctc, const TimingParams& params,
                    uint32_t& delta) {
  if (ctc < last_ctc) {
    // MTC reports only mtc_freq + 8 CTC bits: undo one wrap-around, but not two.
    ctc += CtcPower(params.mtc_freq + kMtcPayloadBits);
    if (ctc < last_ctc) return TimeStatus::kBadPacket;
  }
  delta = ctc - last_ctc;
  return TimeStatus::kOk;
}

TimeStatus CtcToTsc(uint64_t ctc, const TimingParams& params, uint64_t& tsc) {
  if (params.cpuid_0x15_eax == 0 || params.cpuid_0x15_ebx == 0) return TimeStatus::kBadConfig;
  tsc = (ctc * params.cpuid_0x15_ebx) / params.cpuid_0x15_eax;
  return TimeStatus::kOk;
}

TimeStatus TimeTracker::OnTsc(uint64_t tsc) {
  have_tsc_ = true;
  have_tma_ = false;
  have_mtc_ = false;
  tsc_ = base_ = tsc;
  ctc_ = 0;
  fc_ = 0;
  // A full TSC makes up for MTC and CYC packets lost before it.
  lost_mtc_ = 0;
  lost_cyc_ = 0;
  return TimeStatus::kOk;
}

TimeStatus TimeTracker::OnCbr(uint8_t ratio) {
  if (ratio == 0) return TimeStatus::kBadPacket;
  have_cbr_ = true;
  cbr_ = ratio;
  return TimeStatus::kOk;
}

TimeStatus TimeTracker::OnTma(uint16_t ctc, uint16_t fc) {
  // TMA belongs right after a TSC, once.
  if (!have_tsc_ || have_tma_) return TimeStatus::kBadContext;
  if (have_mtc_) return TimeStatus::kInternal;

  const unsigned mtc_bits = params_.mtc_freq + kMtcPayloadBits;
  const uint32_t ctc_mask = CtcPower(mtc_bits) - 1;  // all ones when mtc_bits >= 32

  have_tma_ = true;
  // The TSC was sampled `fc` fast-counter ticks after the CTC value TMA reports.
  base_ -= fc;
  fc_ += fc;
  // When TMA holds every CTC bit an MTC would, it serves as the first MTC; otherwise the next
  // MTC supplies the missing high bits.
  if (mtc_bits <= kTmaCtcBits) have_mtc_ = true;
  ctc_ = ctc_at_fc_reset_ = ctc & ctc_mask;
  return TimeStatus::kOk;
}

TimeStatus TimeTracker::OnMtc(uint8_t payload) {
  // Between a TSC and its TMA, an MTC would look like a CTC jump: skip it.
  if (have_tsc_ && !have_tma_) return TimeStatus::kOk;

  const bool had_mtc = have_mtc_;
  uint32_t last_ctc = ctc_;
  const uint32_t ctc = MtcCtc(payload, params_.mtc_freq);

  if (fc_ != 0 || lost_cyc_ != 0 || !had_mtc) ctc_at_fc_reset_ = ctc;
  have_mtc_ = true;
  fc_ = 0;
  ctc_ = ctc;
  lost_cyc_ = 0;

  if (!had_mtc) {
    // Without a TMA we cannot tell where in its period this first MTC falls: only note its CTC.
    if (!have_tma_) return TimeStatus::kOk;
    if (last_ctc & ~kTmaCtcMask) return TimeStatus::kInternal;
    // TMA gave the low 16 CTC bits; borrow the high bits from this MTC, one period earlier if
    // the low bits wrapped in between.
    uint32_t high = ctc & ~kTmaCtcMask;
    if ((ctc & kTmaCtcMask) < last_ctc) {
      high -= 1u << kTmaCtcBits;
      high &= MtcCtc(0xff, params_.mtc_freq);
    }
    last_ctc |= high;
  }

  uint32_t delta = 0;
  TimeStatus status = CtcDelta(ctc, last_ctc, params_, delta);
  if (status != TimeStatus::kOk) {
    ++lost_mtc_;
    return status;
  }
  uint64_t ticks = 0;
  status = ticks_.Convert(delta, params_, ticks);
  if (status != TimeStatus::kOk) return status;
  base_ += ticks;
  tsc_ = base_;
  return TimeStatus::kOk;
}

TimeStatus TimeTracker::TrimCycToPeriod(uint64_t& cycles, uint64_t fcr) const {
  if (ctc_ == ctc_at_fc_reset_) return TimeStatus::kOk;
  uint32_t delta = 0;
  TimeStatus status = CtcDelta(ctc_, ctc_at_fc_reset_, params_, delta);
  if (status != TimeStatus::kOk) return status;
  uint64_t ticks = 0;
  status = ticks_.Convert(delta, params_, ticks);
  if (status != TimeStatus::kOk) return status;
  // The cycles that belong to the earlier MTC periods, at the calibrated rate. If the payload is
  // smaller, the earlier periods take all of it: an estimate that lags is the lesser evil.
  const uint64_t earlier = (ticks << kFcrShift) / fcr;
  cycles = cycles < earlier ? 0 : cycles - earlier;
  return TimeStatus::kOk;
}

TimeStatus TimeTracker::OnCyc(uint64_t cycles, uint64_t fcr) {
  if (fcr == 0) {
    ++lost_cyc_;
    return TimeStatus::kOk;
  }
  if (fc_ == 0) {
    const TimeStatus status = TrimCycToPeriod(cycles, fcr);
    if (status != TimeStatus::kOk) return status;
  }
  fc_ += (cycles * fcr) >> kFcrShift;
  tsc_ = base_ + fc_;
  return TimeStatus::kOk;
}

}  // namespace ptprof::pt
