#include "src/analyses/impact/impact_report.h"

#include <cinttypes>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace ptprof::impact {

namespace {

using nlohmann::ordered_json;

ordered_json ExtraJson(const Extra& e) {
  return {{"mean", e.mean}, {"min", e.min},       {"q1", e.q1},
          {"median", e.median}, {"q3", e.q3}, {"max", e.max}};
}

ordered_json DistributionJson(const syscalls::Distribution& d) {
  return {{"count", d.count}, {"min", d.min}, {"p50", d.p50}, {"max", d.max}, {"mean", d.mean}};
}

ordered_json CodesJson(const std::vector<TracerCode>& codes, size_t top) {
  ordered_json list = ordered_json::array();
  for (size_t i = 0; i < codes.size() && i < top; ++i)
    list.push_back({{"name", codes[i].name},
                    {"places", codes[i].places},
                    {"insns", codes[i].insns},
                    {"insns_per_call", codes[i].insns_per_call},
                    {"share_of_extra", codes[i].share_of_extra}});
  return list;
}

void WriteCodes(std::FILE* out, const char* title, const std::vector<TracerCode>& codes,
                uint64_t total, size_t top, bool per_call) {
  if (codes.empty()) return;
  std::fprintf(out, "    %s: %zu, %" PRIu64 " instructions\n", title, codes.size(), total);
  for (size_t i = 0; i < codes.size() && i < top; ++i) {
    const TracerCode& c = codes[i];
    std::string numbers = per_call ? fmt::format("{:10.1f} insns/call", c.insns_per_call)
                                   : fmt::format("{:10} insns", c.insns);
    std::fprintf(out, "      %-36s %s  %5.1f%% of the extra  (%" PRIu64 " places)\n",
                 c.name.c_str(), numbers.c_str(), c.share_of_extra * 100, c.places);
  }
}

}  // namespace

void WriteImpactText(std::FILE* out, const ImpactResult& r, size_t top) {
  std::fprintf(out, "baseline: %s (%" PRIu64 " instructions, %" PRIu64 " syscalls)\n",
               r.baseline.c_str(), r.insns_a, r.syscalls_a);
  std::fprintf(out, "traced:   %s (%" PRIu64 " instructions, %" PRIu64 " syscalls)\n\n",
               r.traced.c_str(), r.insns_b, r.syscalls_b);
  std::fprintf(out, "%-14s %5s %5s %10s %10s %10s %10s %17s %10s %10s\n", "syscall", "calls",
               "calls", "insns", "insns", "extra", "extra", "extra insns", "extra ns",
               "extra ns");
  std::fprintf(out, "%-14s %5s %5s %10s %10s %10s %10s %17s %10s %10s\n", "", "A", "B", "A p50",
               "B p50", "mean", "median", "IQR", "mean", "median");
  for (const KindImpact& k : r.kinds) {
    std::fprintf(out, "%-14s %5" PRIu64 " %5" PRIu64 " %10" PRIu64 " %10" PRIu64
                      " %+10.1f %+10" PRId64 " %17s %10s %10s\n",
                 k.name.c_str(), k.count_a, k.count_b, k.insns_a.p50, k.insns_b.p50,
                 k.extra_insns.mean, k.extra_insns.median,
                 fmt::format("[{:+d}, {:+d}]", k.extra_insns.q1, k.extra_insns.q3).c_str(),
                 r.timed ? fmt::format("{:+.0f}", k.extra_ns.mean).c_str() : "-",
                 r.timed ? fmt::format("{:+d}", k.extra_ns.median).c_str() : "-");
  }
  if (!r.kinds.empty())
    std::fprintf(out, "(instructions: kernel side when both recordings trace it, else the user "
                      "instructions before the syscall; extra: B's calls against A's median)\n");
  if (!r.only_in_a.empty() || !r.only_in_b.empty()) {
    std::string a, b;
    for (const auto& n : r.only_in_a) a += (a.empty() ? "" : ", ") + n;
    for (const auto& n : r.only_in_b) b += (b.empty() ? "" : ", ") + n;
    std::fprintf(out, "syscalls only in A: %s; only in B: %s\n", a.empty() ? "-" : a.c_str(),
                 b.empty() ? "-" : b.c_str());
  }
  for (const KindImpact& k : r.kinds) {
    if (k.tracer_paths.empty() && k.tracer_functions.empty()) continue;
    std::fprintf(out, "\n%s: code only with the tracer (per call of B; extra %.1f insns/call)\n",
                 k.name.c_str(), k.insns_b.mean - k.insns_a.mean);
    WriteCodes(out, "new call paths (outermost new frame, with callees)", k.tracer_paths,
               k.tracer_path_insns, top, true);
    WriteCodes(out, "functions never run in the baseline (self)", k.tracer_functions,
               k.tracer_function_insns, top, true);
  }
  std::fprintf(out, "\nwhole flow: %+" PRId64 " instructions\n",
               static_cast<int64_t>(r.insns_b) - static_cast<int64_t>(r.insns_a));
  WriteCodes(out, "new call paths (outermost new frame, with callees)", r.flow_tracer_paths,
             r.flow_tracer_path_insns, top, false);
  WriteCodes(out, "functions never run in the baseline (self)", r.flow_tracer_functions,
             r.flow_tracer_function_insns, top, false);
  if (!r.functions.empty()) {
    std::fprintf(out, "    functions with the largest change (calls A -> B, self instructions A -> B):\n");
    for (size_t i = 0; i < r.functions.size() && i < top; ++i) {
      const FunctionChange& f = r.functions[i];
      std::fprintf(out, "      %-36s %8" PRIu64 " -> %-8" PRIu64 " %10" PRIu64 " -> %" PRIu64 "\n",
                   f.name.c_str(), f.calls_a, f.calls_b, f.insns_a, f.insns_b);
    }
  }
  std::fprintf(out, "\nsummary: %s\n", r.summary.c_str());
}

void WriteImpactJson(std::FILE* out, const ImpactResult& r, size_t top) {
  ordered_json j;
  j["baseline"] = {{"input", r.baseline}, {"instructions", r.insns_a}, {"syscalls", r.syscalls_a}};
  j["traced"] = {{"input", r.traced}, {"instructions", r.insns_b}, {"syscalls", r.syscalls_b}};
  j["timed"] = r.timed;
  ordered_json kinds = ordered_json::array();
  for (const KindImpact& k : r.kinds)
    kinds.push_back({{"syscall", k.name},
                     {"number", k.number < 0 ? ordered_json(nullptr) : ordered_json(k.number)},
                     {"calls_baseline", k.count_a},
                     {"calls_traced", k.count_b},
                     {"kernel_traced", k.kernel_traced},
                     {"insns_baseline", DistributionJson(k.insns_a)},
                     {"insns_traced", DistributionJson(k.insns_b)},
                     {"latency_ns_baseline", DistributionJson(k.latency_a)},
                     {"latency_ns_traced", DistributionJson(k.latency_b)},
                     {"extra_insns_per_call", ExtraJson(k.extra_insns)},
                     {"extra_ns_per_call", r.timed ? ExtraJson(k.extra_ns) : ordered_json(nullptr)},
                     {"tracer_paths", CodesJson(k.tracer_paths, top)},
                     {"tracer_path_insns", k.tracer_path_insns},
                     {"tracer_functions", CodesJson(k.tracer_functions, top)},
                     {"tracer_function_insns", k.tracer_function_insns}});
  j["syscalls"] = std::move(kinds);
  j["only_in_baseline"] = r.only_in_a;
  j["only_in_traced"] = r.only_in_b;
  j["flow"] = {{"extra_insns", static_cast<int64_t>(r.insns_b) - static_cast<int64_t>(r.insns_a)},
               {"tracer_paths", CodesJson(r.flow_tracer_paths, top)},
               {"tracer_path_insns", r.flow_tracer_path_insns},
               {"tracer_functions", CodesJson(r.flow_tracer_functions, top)},
               {"tracer_function_insns", r.flow_tracer_function_insns}};
  ordered_json functions = ordered_json::array();
  for (size_t i = 0; i < r.functions.size() && i < top; ++i)
    functions.push_back({{"name", r.functions[i].name},
                         {"calls_baseline", r.functions[i].calls_a},
                         {"calls_traced", r.functions[i].calls_b},
                         {"insns_baseline", r.functions[i].insns_a},
                         {"insns_traced", r.functions[i].insns_b}});
  j["functions"] = std::move(functions);
  j["summary"] = r.summary;
  std::fprintf(out, "%s\n", j.dump(2).c_str());
}

}  // namespace ptprof::impact
