#pragma once
// TimeTracker answers "what is the TSC at this point of the trace?". Intel PT gives the full TSC only
// now and then (TSC packets); in between, MTC packets count a slower crystal clock (CTC) and CYC
// packets count core cycles. TimeTracker combines them into an estimated TSC the same way libipt
// 2.0.5 does (so that `ptprof dump --format ptdump --time` matches ptdump), using the cycle-to-TSC
// ratio that TimeCalibration (pt_time_cal.h) measures. libipt keeps this logic internal, so ptprof
// has its own.
#include <cstdint>

#include "decoders/pt/pt_params.h"

struct pt_config;

namespace ptprof::pt {

// Why a timing update or query did not fully succeed; each maps to one libipt error code so the
// ptdump writer can print libipt's message.
enum class TimeStatus {
  kOk,
  kNoTime,      // no TSC yet (query) or no calibration yet
  kBadContext,  // a TMA without a TSC before it, or a second TMA
  kBadPacket,   // a CTC that moved back by more than one wrap, a zero CBR ratio
  kBadConfig,   // the CPUID 0x15 ratio is zero: CTC cannot be converted
  kInternal,    // an inconsistency the packet order should not allow
};

// The parts of the PT configuration that timing needs.
struct TimingParams {
  uint8_t mtc_freq = 0;        // CTC bits below the MTC payload
  uint8_t nom_freq = 0;        // nominal core:bus ratio (P1)
  uint32_t cpuid_0x15_eax = 0;  // TSC:CTC = ebx / eax
  uint32_t cpuid_0x15_ebx = 0;
  bool skl168 = false;         // erratum SKL168: CYC can be lost right before a PSB
};

// libipt's error code (a negative pte_* value, 0 for kOk) for a status.
int LibiptErrorOf(TimeStatus status);

// The timing parameters of `params`, with the errata of its CPU.
TimingParams TimingParamsFor(const PtParams& params);
// The timing parameters of a libipt configuration (errata included).
TimingParams TimingParamsOf(const pt_config& config);

// Cycle-to-TSC ratios are fixed-point numbers with this many fraction bits.
inline constexpr unsigned kFcrShift = 8;

// The distance from `last_ctc` to `ctc`, allowing one wrap of the CTC bits MTC reports.
TimeStatus CtcDelta(uint32_t ctc, uint32_t last_ctc, const TimingParams& params, uint32_t& delta);

// `ctc` CTC ticks in TSC ticks (the "fast counter" unit).
TimeStatus CtcToTsc(uint64_t ctc, const TimingParams& params, uint64_t& tsc);

// CtcToTsc with the last conversion kept: MTC after MTC converts the same CTC delta (one MTC
// period), and the conversion divides. `params` must be the same at every call.
class CtcTicks {
 public:
  TimeStatus Convert(uint64_t ctc, const TimingParams& params, uint64_t& tsc) {
    if (known_ && ctc == ctc_) {
      tsc = tsc_;
      return TimeStatus::kOk;
    }
    const TimeStatus status = CtcToTsc(ctc, params, tsc);
    if (status == TimeStatus::kOk) {
      known_ = true;
      ctc_ = ctc;
      tsc_ = tsc;
    }
    return status;
  }

 private:
  bool known_ = false;
  uint64_t ctc_ = 0;
  uint64_t tsc_ = 0;
};

class TimeTracker {
 public:
  explicit TimeTracker(const TimingParams& params) : params_(params) {}

  TimeStatus OnTsc(uint64_t tsc);
  TimeStatus OnCbr(uint8_t ratio);
  TimeStatus OnTma(uint16_t ctc, uint16_t fc);
  TimeStatus OnMtc(uint8_t ctc);
  // `fcr` is the calibrated cycle-to-TSC ratio (kFcrShift fraction bits); 0 when uncalibrated,
  // which loses this CYC's time.
  TimeStatus OnCyc(uint64_t cycles, uint64_t fcr);

  // The estimated TSC; kNoTime (with `tsc` still set to the relative estimate) before any TSC.
  TimeStatus Query(uint64_t& tsc) const {
    tsc = tsc_;
    return have_tsc_ ? TimeStatus::kOk : TimeStatus::kNoTime;
  }

  // The last core:bus ratio (CBR packet), 0 before the first.
  uint8_t core_bus_ratio() const { return have_cbr_ ? cbr_ : 0; }
  uint32_t lost_mtc() const { return lost_mtc_; }
  uint32_t lost_cyc() const { return lost_cyc_; }

  void Reset() { *this = TimeTracker(params_); }

 private:
  // Shortens a CYC payload that started in an earlier MTC period to the current period's part.
  TimeStatus TrimCycToPeriod(uint64_t& cycles, uint64_t fcr) const;

  TimingParams params_;
  mutable CtcTicks ticks_;
  uint64_t tsc_ = 0;   // the estimate
  uint64_t base_ = 0;  // TSC at the last TSC/MTC
  uint64_t fc_ = 0;    // TSC ticks added by CYC (and TMA) since base_
  uint32_t ctc_ = 0;   // CTC at the last MTC/TMA
  uint32_t ctc_at_fc_reset_ = 0;
  uint32_t lost_mtc_ = 0;
  uint32_t lost_cyc_ = 0;
  uint8_t cbr_ = 0;
  bool have_tsc_ = false;
  bool have_cbr_ = false;
  bool have_tma_ = false;
  bool have_mtc_ = false;
};

}  // namespace ptprof::pt
