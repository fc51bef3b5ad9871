#include "src/analyses/sweep/sweep_grid.h"

#include <algorithm>

namespace ptprof::sweep {

namespace {

std::string Trim(const std::string& text) {
  size_t begin = text.find_first_not_of(" \t");
  if (begin == std::string::npos) return "";
  size_t end = text.find_last_not_of(" \t");
  return text.substr(begin, end - begin + 1);
}

std::vector<std::string> SplitCommas(const std::string& text) {
  std::vector<std::string> items;
  size_t at = 0;
  while (true) {
    size_t comma = text.find(',', at);
    items.push_back(Trim(text.substr(at, comma == std::string::npos ? std::string::npos
                                                                    : comma - at)));
    if (comma == std::string::npos) break;
    at = comma + 1;
  }
  return items;
}

// N or 2^K; `power` says whether it was written 2^K.
Result<uint64_t> ParseValue(const std::string& text, const std::string& field, bool* power) {
  auto digits = [](const std::string& s) {
    return !s.empty() && s.size() <= 19 && s.find_first_not_of("0123456789") == std::string::npos;
  };
  *power = false;
  if (text.rfind("2^", 0) == 0) {
    std::string exponent = text.substr(2);
    if (!digits(exponent) || std::stoull(exponent) > 62)
      return Fail(field + ": '" + text + "' is not 2^K with K from 0 to 62");
    *power = true;
    return uint64_t{1} << std::stoull(exponent);
  }
  if (!digits(text)) return Fail(field + ": '" + text + "' is not a number, 2^K or A..B");
  return std::stoull(text);
}

}  // namespace

std::string PacketConfig::Label() const {
  std::string label = "psb=" + std::to_string(psb_period);
  label += ",mtc=" + (mtc_period ? std::to_string(*mtc_period) : std::string("off"));
  label += ",cyc=" + (cyc_threshold ? std::to_string(*cyc_threshold) : std::string("off"));
  label += tsc ? ",tsc=on" : ",tsc=off";
  return label;
}

std::vector<std::string> PacketConfig::RecordArgs() const {
  std::vector<std::string> args = {"--psb-period", std::to_string(psb_period)};
  if (mtc_period) args.insert(args.end(), {"--mtc-period", std::to_string(*mtc_period)});
  if (cyc_threshold) args.insert(args.end(), {"--cyc-threshold", std::to_string(*cyc_threshold)});
  if (!tsc) args.push_back("--no-tsc");
  return args;
}

const char* SweepAxisName(SweepAxis axis) {
  switch (axis) {
    case SweepAxis::kPsb: return "psb";
    case SweepAxis::kMtc: return "mtc";
    case SweepAxis::kCyc: return "cyc";
    case SweepAxis::kTsc: return "tsc";
    case SweepAxis::kPoint: return "point";
  }
  return "point";
}

Result<std::vector<uint64_t>> ParseValueList(const std::string& text, const std::string& field,
                                             uint64_t min, uint64_t max) {
  std::vector<uint64_t> values;
  if (Trim(text).empty()) return Fail(field + ": the list is empty");
  for (const std::string& item : SplitCommas(text)) {
    if (item.empty()) return Fail(field + ": an empty item in '" + text + "'");
    size_t dots = item.find("..");
    bool power_a = false, power_b = false;
    if (dots == std::string::npos) {
      auto value = ParseValue(item, field, &power_a);
      if (!value) return tl::unexpected(value.error());
      values.push_back(*value);
      continue;
    }
    auto a = ParseValue(Trim(item.substr(0, dots)), field, &power_a);
    if (!a) return tl::unexpected(a.error());
    auto b = ParseValue(Trim(item.substr(dots + 2)), field, &power_b);
    if (!b) return tl::unexpected(b.error());
    if (*a > *b) return Fail(field + ": the range '" + item + "' runs backwards");
    if (power_a && power_b) {
      for (uint64_t v = *a; v <= *b && v != 0; v *= 2) values.push_back(v);
    } else {
      if (*b - *a > 4096) return Fail(field + ": the range '" + item + "' has over 4096 values");
      for (uint64_t v = *a; v <= *b; ++v) values.push_back(v);
    }
  }
  for (uint64_t v : values)
    if (v < min || v > max)
      return Fail(field + ": " + std::to_string(v) + " is outside " + std::to_string(min) + ".." +
                  std::to_string(max));
  std::vector<uint64_t> unique;
  for (uint64_t v : values)
    if (std::find(unique.begin(), unique.end(), v) == unique.end()) unique.push_back(v);
  return unique;
}

Result<std::vector<std::optional<uint8_t>>> ParseOptionalList(const std::string& text,
                                                              const std::string& field,
                                                              uint64_t min, uint64_t max) {
  std::vector<std::optional<uint8_t>> values;
  if (Trim(text).empty()) return Fail(field + ": the list is empty");
  std::string numbers;
  for (const std::string& item : SplitCommas(text)) {
    if (item == "off") {
      values.push_back(std::nullopt);
      continue;
    }
    auto parsed = ParseValueList(item, field, min, max);
    if (!parsed) return tl::unexpected(parsed.error());
    for (uint64_t v : *parsed) values.push_back(static_cast<uint8_t>(v));
  }
  std::vector<std::optional<uint8_t>> unique;
  for (const auto& v : values)
    if (std::find(unique.begin(), unique.end(), v) == unique.end()) unique.push_back(v);
  return unique;
}

Result<std::vector<bool>> ParseOnOffList(const std::string& text, const std::string& field) {
  std::vector<bool> values;
  for (const std::string& item : SplitCommas(text)) {
    bool value;
    if (item == "on") value = true;
    else if (item == "off") value = false;
    else return Fail(field + ": '" + item + "' is neither on nor off");
    if (std::find(values.begin(), values.end(), value) == values.end()) values.push_back(value);
  }
  return values;
}

PacketConfig BaselineOf(const GridLists& lists) {
  PacketConfig base;
  if (lists.psb.size() == 1) base.psb_period = lists.psb[0];
  if (lists.mtc.size() == 1) base.mtc_period = lists.mtc[0];
  if (lists.cyc.size() == 1) base.cyc_threshold = lists.cyc[0];
  if (lists.tsc.size() == 1) base.tsc = lists.tsc[0];
  return base;
}

std::vector<GridPoint> BuildGrid(const GridLists& lists, GridMode mode) {
  std::vector<GridPoint> points;
  if (lists.psb.empty() || lists.mtc.empty() || lists.cyc.empty() || lists.tsc.empty())
    return points;
  auto add = [&points](SweepAxis axis, const PacketConfig& config) {
    for (const GridPoint& p : points)
      if (p.config == config) return;
    points.push_back({axis, config});
  };
  if (mode == GridMode::kProduct) {
    for (bool tsc : lists.tsc)
      for (const auto& cyc : lists.cyc)
        for (const auto& mtc : lists.mtc)
          for (uint64_t psb : lists.psb) add(SweepAxis::kPoint, {psb, mtc, cyc, tsc});
    return points;
  }
  const PacketConfig base = BaselineOf(lists);
  bool swept = false;
  if (lists.psb.size() > 1) {
    swept = true;
    for (uint64_t psb : lists.psb) {
      PacketConfig c = base;
      c.psb_period = psb;
      add(SweepAxis::kPsb, c);
    }
  }
  if (lists.mtc.size() > 1) {
    swept = true;
    for (const auto& mtc : lists.mtc) {
      PacketConfig c = base;
      c.mtc_period = mtc;
      add(SweepAxis::kMtc, c);
    }
  }
  if (lists.cyc.size() > 1) {
    swept = true;
    for (const auto& cyc : lists.cyc) {
      PacketConfig c = base;
      c.cyc_threshold = cyc;
      add(SweepAxis::kCyc, c);
    }
  }
  if (lists.tsc.size() > 1) {
    swept = true;
    for (bool tsc : lists.tsc) {
      PacketConfig c = base;
      c.tsc = tsc;
      add(SweepAxis::kTsc, c);
    }
  }
  if (!swept) add(SweepAxis::kPoint, base);
  return points;
}

}  // namespace ptprof::sweep
