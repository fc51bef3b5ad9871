#pragma once
// SweepGrid answers "which packet configurations does a sweep run?": it parses the value lists of
// `ptprof sweep` (`2^8..2^16`, `256,1024`, `0..9`, `off`) and spans them into grid points, either
// every combination (product) or one parameter at a time with the others at their baseline (axes:
// the paper's figures 5-7, where MTC and CYC are off while PSB varies, and so on).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "src/model/result.h"

namespace ptprof::sweep {

// One Intel PT packet configuration, as `ptprof record` spells it.
struct PacketConfig {
  uint64_t psb_period = 4096;            // bytes between PSB+ (--psb-period)
  std::optional<uint8_t> mtc_period;     // MTC every 2^N crystal ticks (--mtc-period), off: none
  std::optional<uint8_t> cyc_threshold;  // CYC once 2^(N-1) cycles passed (--cyc-threshold)
  bool tsc = true;                       // TSC/TMA/CBR (and MTC) packets (--no-tsc when false)

  // "psb=4096,mtc=off,cyc=3,tsc=on": stable, used in file names and tables.
  std::string Label() const;
  // The `ptprof record` options that select this configuration.
  std::vector<std::string> RecordArgs() const;
  bool operator==(const PacketConfig&) const = default;
};

// The swept parameters, in the order tables and plots use.
enum class SweepAxis : uint8_t { kPsb, kMtc, kCyc, kTsc, kPoint };
const char* SweepAxisName(SweepAxis axis);  // "psb", "mtc", "cyc", "tsc", "point"

struct GridLists {
  std::vector<uint64_t> psb = {4096};
  std::vector<std::optional<uint8_t>> mtc = {std::nullopt};
  std::vector<std::optional<uint8_t>> cyc = {std::nullopt};
  std::vector<bool> tsc = {true};
};

enum class GridMode : uint8_t { kProduct, kAxes };

struct GridPoint {
  SweepAxis axis = SweepAxis::kPoint;  // the parameter this point varies (kPoint: product mode)
  PacketConfig config;
};

// Parses a list of unsigned values: items separated by commas, each N, 2^K, or A..B (every power
// of two from A to B when both ends are written 2^K, else every integer). `field` names the option
// in errors; values must lie in [min, max].
Result<std::vector<uint64_t>> ParseValueList(const std::string& text, const std::string& field,
                                             uint64_t min, uint64_t max);
// The same, where "off" is also a value (nullopt).
Result<std::vector<std::optional<uint8_t>>> ParseOptionalList(const std::string& text,
                                                              const std::string& field,
                                                              uint64_t min, uint64_t max);
// "on", "off" or "on,off".
Result<std::vector<bool>> ParseOnOffList(const std::string& text, const std::string& field);

// The configuration every axis starts from: a list with one value fixes that parameter; a
// parameter with several values stays at ptprof record's default (PSB 4096, MTC and CYC off, TSC
// on) while another one is swept.
PacketConfig BaselineOf(const GridLists& lists);

// The grid points, without duplicates (a configuration on two axes appears once, on the first).
// Empty when a list is empty.
std::vector<GridPoint> BuildGrid(const GridLists& lists, GridMode mode);

}  // namespace ptprof::sweep
