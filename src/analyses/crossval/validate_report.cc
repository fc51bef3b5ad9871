#include "src/analyses/crossval/validate_report.h"

#include <fmt/format.h>

namespace ptprof {

double Percent(uint64_t part, uint64_t whole) {
  return whole ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0;
}

namespace {

std::string Where(uint64_t address, const std::string& symbol) {
  return symbol.empty() ? fmt::format("{:#x}", address) : fmt::format("{:#x} ({})", address, symbol);
}

nlohmann::ordered_json ExampleJson(const BurstCounterexample& e) {
  nlohmann::ordered_json j;
  j["sample"] = e.sample;
  j["trace_offset"] = fmt::format("{:#x}", e.trace_offset);
  j["tid"] = e.tid;
  j["record"] = e.record;
  j["from"] = fmt::format("{:#x}", e.from);
  j["to"] = fmt::format("{:#x}", e.to);
  j["next_from"] = fmt::format("{:#x}", e.next_from);
  j["from_symbol"] = e.from_symbol;
  j["to_symbol"] = e.to_symbol;
  j["next_symbol"] = e.next_symbol;
  j["reason"] = e.reason;
  return j;
}

}  // namespace

void WriteValidateText(std::FILE* out, const ValidateInputs& in, const CrossValidation& v) {
  const uint64_t judged = v.bursts_mapped;
  fmt::print(out, "A (flow):             {}: {} taken branches in {} runs\n", in.a, v.flow_branches,
             v.flow_runs);
  fmt::print(out, "B (branch records):   {} ({}): {} bursts, {} records\n", in.b, in.b_kind, v.bursts,
             v.records);
  fmt::print(out, "mapped into A's files: {:.1f}% of bursts ({} of {}; {} empty)\n",
             Percent(v.bursts_mapped, v.bursts - v.empty), v.bursts_mapped, v.bursts - v.empty, v.empty);
  fmt::print(out, "path consistency (of the {} mapped bursts):\n", judged);
  fmt::print(out, "  found in the flow    {:6.2f}%  {}\n", Percent(v.in_flow, judged), v.in_flow);
  fmt::print(out, "  feasible only        {:6.2f}%  {}\n", Percent(v.feasible, judged), v.feasible);
  fmt::print(out, "  inconsistent         {:6.2f}%  {}\n", Percent(v.inconsistent, judged), v.inconsistent);
  fmt::print(out, "  consistent           {:6.2f}%\n", Percent(v.in_flow + v.feasible, judged));
  for (const BurstCounterexample& e : v.counterexamples)
    fmt::print(out, "  inconsistent burst {} (offset {:#x}, tid {}): record {} {} -> {}, next branch {}: {}\n",
               e.sample, e.trace_offset, e.tid, e.record, Where(e.from, e.from_symbol),
               Where(e.to, e.to_symbol), Where(e.next_from, e.next_symbol), e.reason);
  for (const BurstCounterexample& e : v.unmapped_examples)
    fmt::print(out, "  unmapped burst {} (offset {:#x}): record {} {} -> {}\n", e.sample, e.trace_offset,
               e.record, Where(e.from, e.from_symbol), Where(e.to, e.to_symbol));
  fmt::print(out, "profile similarity (AutoFDO profile_diff overlap, 100% = same distribution):\n");
  fmt::print(out, "  edges {:.1f}%, ranges {:.1f}%\n", v.edge_overlap, v.range_overlap);
  fmt::print(out, "  {:>8} {:>8} {:>8} {:>8}  function\n", "A share", "B share", "edges", "ranges");
  for (const FunctionSimilarity& f : v.functions)
    fmt::print(out, "  {:7.2f}% {:7.2f}% {:7.1f}% {:7.1f}%  {}\n", f.share_a, f.share_b, f.edge_overlap,
               f.range_overlap, f.name);
}

nlohmann::ordered_json ValidateJson(const ValidateInputs& in, const CrossValidation& v) {
  nlohmann::ordered_json j;
  j["a"] = {{"file", in.a}, {"taken_branches", v.flow_branches}, {"runs", v.flow_runs}, {"images", v.images_a}};
  j["b"] = {{"file", in.b}, {"kind", in.b_kind}, {"bursts", v.bursts}, {"records", v.records},
            {"empty_bursts", v.empty}, {"images", v.images_b}};
  j["mapped_bursts"] = v.bursts_mapped;
  j["mapped_percent"] = Percent(v.bursts_mapped, v.bursts - v.empty);
  nlohmann::ordered_json path;
  path["in_flow"] = v.in_flow;
  path["feasible_only"] = v.feasible;
  path["inconsistent"] = v.inconsistent;
  path["unmapped"] = v.unmapped;
  path["in_flow_percent"] = Percent(v.in_flow, v.bursts_mapped);
  path["feasible_only_percent"] = Percent(v.feasible, v.bursts_mapped);
  path["inconsistent_percent"] = Percent(v.inconsistent, v.bursts_mapped);
  path["consistent_percent"] = Percent(v.in_flow + v.feasible, v.bursts_mapped);
  path["counterexamples"] = nlohmann::ordered_json::array();
  for (const auto& e : v.counterexamples) path["counterexamples"].push_back(ExampleJson(e));
  path["unmapped_examples"] = nlohmann::ordered_json::array();
  for (const auto& e : v.unmapped_examples) path["unmapped_examples"].push_back(ExampleJson(e));
  j["path_consistency"] = path;
  nlohmann::ordered_json sim;
  sim["method"] = "AutoFDO profile_diff overlap: 100 * sum_k min(a_k/sum(a), b_k/sum(b))";
  sim["edge_overlap_percent"] = v.edge_overlap;
  sim["range_overlap_percent"] = v.range_overlap;
  sim["functions"] = nlohmann::ordered_json::array();
  for (const auto& f : v.functions)
    sim["functions"].push_back({{"name", f.name}, {"share_a_percent", f.share_a},
                                {"share_b_percent", f.share_b}, {"edge_overlap_percent", f.edge_overlap},
                                {"range_overlap_percent", f.range_overlap}});
  j["profile_similarity"] = sim;
  return j;
}

}  // namespace ptprof
