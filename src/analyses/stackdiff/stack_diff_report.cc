#include "src/analyses/stackdiff/stack_diff_report.h"

#include <fmt/format.h>

namespace ptprof::stackdiff {

namespace {

std::string JoinPath(const std::vector<std::string>& path) {
  std::string text;
  for (const std::string& name : path) text += (text.empty() ? "" : ";") + name;
  return text;
}

std::string Share(const PathSide& side) {
  return side.present ? fmt::format("{:.2f}%", 100.0 * side.share) : std::string("-");
}

uint64_t WeightOf(const PathSide& side, Weight weight) {
  return weight == Weight::kNs ? side.total_ns : side.total_insns;
}

nlohmann::json SideJson(const PathSide& side) {
  return {{"present", side.present},       {"entries", side.entries},
          {"total_insns", side.total_insns}, {"self_insns", side.self_insns},
          {"total_ns", side.total_ns},     {"self_ns", side.self_ns},
          {"share", side.share}};
}

nlohmann::json PathJson(const PathDiff& diff) {
  return {{"path", diff.path},
          {"change", PathChangeName(diff.change)},
          {"starts_difference", diff.starts_difference},
          {"a", SideJson(diff.a)},
          {"b", SideJson(diff.b)},
          {"delta_share", diff.delta_share()}};
}

}  // namespace

std::string StackDiffText(const StackDiff& diff, const StackDiffNames& names, size_t top) {
  const bool ns = diff.weight == Weight::kNs;
  const char* unit = ns ? "ns" : "insns";
  std::string out;
  out += fmt::format("A: {}: {} instructions, {} ns\n", names.a, diff.insns_a, diff.ns_a);
  out += fmt::format("B: {}: {} instructions, {} ns\n", names.b, diff.insns_b, diff.ns_b);
  out += fmt::format("shared {}: {:.1f}% (sum over call paths of the smaller exclusive share)\n",
                     ns ? "time" : "instructions", 100.0 * diff.shared_fraction);
  if (diff.warning) out += "warning: " + *diff.warning + "\n";
  out += fmt::format("paths: {} only in A, {} only in B, {} changed share (by >= {:.1f} points), "
                     "{} unchanged\n",
                     diff.counts.only_in_a, diff.counts.only_in_b, diff.counts.changed,
                     100.0 * diff.changed_threshold, diff.counts.unchanged);
  const auto largest = diff.LargestDifferences(top);
  if (largest.empty()) {
    out += "no differences\n";
    return out;
  }
  out += fmt::format("largest differences (share of {}; an only-in path stands for its subtree):\n",
                     ns ? "time" : "instructions");
  out += fmt::format("{:<10} {:>8} {:>8} {:>9} {:>12} {:>12} {:>9} {:>9}  {}\n", "change", "share A",
                     "share B", "delta", std::string(unit) + " A", std::string(unit) + " B",
                     "entries A", "entries B", "path");
  for (const PathDiff* d : largest) {
    out += fmt::format("{:<10} {:>8} {:>8} {:>+8.2f}% {:>12} {:>12} {:>9} {:>9}  {}\n",
                       PathChangeName(d->change), Share(d->a), Share(d->b), 100.0 * d->delta_share(),
                       WeightOf(d->a, diff.weight), WeightOf(d->b, diff.weight), d->a.entries,
                       d->b.entries, JoinPath(d->path));
  }
  return out;
}

nlohmann::json StackDiffJson(const StackDiff& diff, const StackDiffNames& names, size_t top) {
  nlohmann::json largest = nlohmann::json::array();
  for (const PathDiff* d : diff.LargestDifferences(top)) largest.push_back(PathJson(*d));
  nlohmann::json paths = nlohmann::json::array();
  for (const PathDiff& d : diff.paths) paths.push_back(PathJson(d));
  return {{"a", {{"input", names.a}, {"total_insns", diff.insns_a}, {"total_ns", diff.ns_a}}},
          {"b", {{"input", names.b}, {"total_insns", diff.insns_b}, {"total_ns", diff.ns_b}}},
          {"weight", diff.weight == Weight::kNs ? "ns" : "insns"},
          {"changed_threshold", diff.changed_threshold},
          {"shared_fraction", diff.shared_fraction},
          {"counts",
           {{"only_in_a", diff.counts.only_in_a},
            {"only_in_b", diff.counts.only_in_b},
            {"changed", diff.counts.changed},
            {"unchanged", diff.counts.unchanged}}},
          {"warning", diff.warning ? nlohmann::json(*diff.warning) : nlohmann::json()},
          {"largest", std::move(largest)},
          {"paths", std::move(paths)}};
}

}  // namespace ptprof::stackdiff
