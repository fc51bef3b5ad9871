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

void OnlyInTable(const std::vector<OnlyInFunction>& functions, const char* side, Weight weight,
                 size_t top, std::string& out) {
  if (functions.empty()) return;
  out += fmt::format("functions starting paths only in {} (summed over the places they start):\n", side);
  out += fmt::format("{:>8} {:>12} {:>12} {:>9} {:>7}  {}\n", std::string("share ") + side,
                     std::string("insns ") + side, std::string("ns ") + side, "entries", "places",
                     "function");
  size_t shown = 0;
  for (const OnlyInFunction& f : functions) {
    if (top && shown++ == top) {
      out += fmt::format("  ({} more)\n", functions.size() - top);
      break;
    }
    out += fmt::format("{:>7.2f}% {:>12} {:>12} {:>9} {:>7}  {}\n", 100.0 * f.share, f.insns, f.ns,
                       f.entries, f.places, f.name);
  }
  (void)weight;
}

nlohmann::json FunctionsJson(const std::vector<OnlyInFunction>& functions) {
  nlohmann::json out = nlohmann::json::array();
  for (const OnlyInFunction& f : functions)
    out.push_back({{"function", f.name}, {"places", f.places}, {"entries", f.entries},
                   {"insns", f.insns}, {"ns", f.ns}, {"share", f.share}});
  return out;
}

// One path: {"path":[...],"change","starts_difference","a","b","delta_share"} (the streaming
// writer, src/report/stack_diff_json_text.h, prints the same members itself).
nlohmann::json PathDiffJson(const StackDiff& diff, const PathDiff& path) {
  return {{"path", diff.PathOf(path)},
          {"change", PathChangeName(path.change)},
          {"starts_difference", path.starts_difference},
          {"a", SideJson(path.a)},
          {"b", SideJson(path.b)},
          {"delta_share", path.delta_share()}};
}

}  // namespace

std::string StackDiffText(const StackDiff& diff, const StackDiffNames& names, size_t top) {
  const bool ns = diff.weight == Weight::kNs;
  const char* unit = ns ? "ns" : "insns";
  std::string out;
  out += fmt::format("A: {}: {} instructions, {} ns\n", names.a, diff.insns_a, diff.ns_a);
  out += fmt::format("B: {}: {} instructions, {} ns\n", names.b, diff.insns_b, diff.ns_b);
  out += fmt::format("on call paths both have: {:.1f}% of A's {}, {:.1f}% of B's (profile overlap "
                     "{:.1f}%)\n",
                     100.0 * diff.shared_a, ns ? "time" : "instructions", 100.0 * diff.shared_b,
                     100.0 * diff.overlap);
  if (diff.warning) out += "warning: " + *diff.warning + "\n";
  out += fmt::format("paths: {} only in A, {} only in B, {} changed share (by >= {:.1f} points), "
                     "{} unchanged\n",
                     diff.counts.only_in_a, diff.counts.only_in_b, diff.counts.changed,
                     100.0 * diff.changed_threshold, diff.counts.unchanged);
  OnlyInTable(diff.only_in_b_functions, "B", diff.weight, top, out);
  OnlyInTable(diff.only_in_a_functions, "A", diff.weight, top, out);
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
                       d->b.entries, JoinPath(diff.PathOf(*d)));
  }
  return out;
}

nlohmann::json StackDiffJson(const StackDiff& diff, const StackDiffNames& names, size_t top) {
  nlohmann::json document = StackDiffHeadJson(diff, names, top);
  nlohmann::json& paths = document["paths"] = nlohmann::json::array();
  for (const PathDiff& d : diff.paths) paths.push_back(PathDiffJson(diff, d));
  return document;
}

nlohmann::json StackDiffHeadJson(const StackDiff& diff, const StackDiffNames& names, size_t top) {
  nlohmann::json largest = nlohmann::json::array();
  for (const PathDiff* d : diff.LargestDifferences(top)) largest.push_back(PathDiffJson(diff, *d));
  return {{"a", {{"input", names.a}, {"total_insns", diff.insns_a}, {"total_ns", diff.ns_a}}},
          {"b", {{"input", names.b}, {"total_insns", diff.insns_b}, {"total_ns", diff.ns_b}}},
          {"weight", diff.weight == Weight::kNs ? "ns" : "insns"},
          {"changed_threshold", diff.changed_threshold},
          {"shared_a", diff.shared_a},
          {"shared_b", diff.shared_b},
          {"overlap", diff.overlap},
          {"only_in_a_functions", FunctionsJson(diff.only_in_a_functions)},
          {"only_in_b_functions", FunctionsJson(diff.only_in_b_functions)},
          {"counts",
           {{"only_in_a", diff.counts.only_in_a},
            {"only_in_b", diff.counts.only_in_b},
            {"changed", diff.counts.changed},
            {"unchanged", diff.counts.unchanged}}},
          {"warning", diff.warning ? nlohmann::json(*diff.warning) : nlohmann::json()},
          {"largest", std::move(largest)},
          {"paths", nullptr}};
}

}  // namespace ptprof::stackdiff
