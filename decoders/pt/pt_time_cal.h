#pragma once
// TimeCalibration answers "how many TSC ticks is one core cycle right now?" (the fast-counter to
// cycles ratio, FCR). CYC packets count core cycles; to turn them into time, the ratio is measured
// from the cycles seen between two MTCs (or two TSCs in PSB+) or derived from the core:bus ratio
// (CBR) and the nominal frequency. This follows libipt 2.0.5's calibration so that ptprof's time
// estimates and ptdump's `--tcal` output match libipt's, including erratum SKL168.
#include <cstdint>

#include "decoders/pt/pt_time.h"

namespace ptprof::pt {

class TimeCalibration {
 public:
  explicit TimeCalibration(const TimingParams& params) : params_(params) {}

  TimeStatus OnPsb();
  // `in_psb`: the packet is part of a PSB+ header (PSB up to PSBEND).
  TimeStatus OnTsc(uint64_t tsc, bool in_psb);
  TimeStatus OnCbr(uint8_t ratio, bool in_psb);
  TimeStatus OnMtc(uint8_t ctc);
  TimeStatus OnCyc(uint64_t cycles);

  // The current ratio with kFcrShift fraction bits; kNoTime before the first calibration.
  TimeStatus Fcr(uint64_t& fcr) const;

  void Reset() { *this = TimeCalibration(params_); }

 private:
  TimeStatus SetFcr(uint64_t fcr);
  bool HaveFcr() const { return min_fcr_ <= max_fcr_; }

  TimingParams params_;
  CtcTicks ticks_;
  uint64_t fcr_ = 0;
  uint64_t min_fcr_ = UINT64_MAX;
  uint64_t max_fcr_ = 0;
  uint64_t last_tsc_ = 0;
  uint64_t cycles_since_tsc_ = 0;
  uint64_t cycles_since_mtc_ = 0;
  uint32_t last_ctc_ = 0;
  uint32_t lost_mtc_ = 0;
  bool have_mtc_ = false;
  bool check_skl168_ = false;
};

}  // namespace ptprof::pt
