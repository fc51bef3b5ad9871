#include "src/analyses/impact/tracer_impact.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include <fmt/format.h>

namespace ptprof::impact {

namespace {

using syscalls::SyscallInstance;

Extra ExtraOver(std::vector<int64_t> values) {
  Extra e;
  if (values.empty()) return e;
  std::sort(values.begin(), values.end());
  auto rank = [&values](double p) {
    size_t index = static_cast<size_t>(std::ceil(p / 100.0 * values.size()));
    return values[index == 0 ? 0 : index - 1];
  };
  e.min = values.front();
  e.max = values.back();
  e.q1 = rank(25);
  e.median = rank(50);
  e.q3 = rank(75);
  double sum = 0;
  for (int64_t v : values) sum += static_cast<double>(v);
  e.mean = sum / values.size();
  return e;
}

void SortLargestFirst(std::vector<TracerCode>& codes) {
  std::stable_sort(codes.begin(), codes.end(),
                   [](const TracerCode& x, const TracerCode& y) { return x.insns > y.insns; });
}

std::vector<std::string> NamesOf(const CallTree& tree) {
  std::set<std::string> names;
  tree.ForEach([&names](const CallTreeNode& node, int) { names.insert(node.name); });
  return {names.begin(), names.end()};
}

void Finish(std::vector<TracerCode>& codes, uint64_t calls, double extra_per_call) {
  for (TracerCode& code : codes) {
    code.insns_per_call = calls ? static_cast<double>(code.insns) / calls : 0;
    code.share_of_extra = extra_per_call > 0 ? code.insns_per_call / extra_per_call : 0;
  }
  SortLargestFirst(codes);
}

uint64_t Sum(const std::vector<TracerCode>& codes) {
  uint64_t total = 0;
  for (const TracerCode& code : codes) total += code.insns;
  return total;
}

std::string Percent(double fraction) { return fmt::format("{:.0f}%", fraction * 100); }

std::string Paragraph(const ImpactResult& r) {
  std::string text;
  if (r.kinds.empty()) {
    text = "The two recordings share no syscall kind";
  } else {
    text = "With the tracer, ";
    size_t shown = 0;
    for (const KindImpact& k : r.kinds) {
      if (shown == 4) break;
      const double base = k.insns_a.p50 ? static_cast<double>(k.insns_a.p50) : 0;
      text += (shown ? (shown + 1 == std::min<size_t>(r.kinds.size(), 4) ? " and " : ", ") : "") +
              fmt::format("{} took {:+.0f} {}instructions per call (median {:+d}{})", k.name,
                          k.extra_insns.mean, k.kernel_traced ? "kernel " : "user ",
                          k.extra_insns.median,
                          base > 0 ? fmt::format(", {:+.0f}% of {}", 100.0 * k.extra_insns.median / base,
                                                 k.insns_a.p50)
                                   : "");
      if (r.timed) text += fmt::format(" and {:+.0f} ns", k.extra_ns.mean);
      ++shown;
    }
    if (r.kinds.size() > 4) text += fmt::format(" (and {} more syscall kinds)", r.kinds.size() - 4);
    uint64_t extra_total = 0, path_total = 0;
    for (const KindImpact& k : r.kinds) {
      const double extra = k.extra_insns.mean * k.count_b;
      if (extra > 0) extra_total += static_cast<uint64_t>(extra);
      path_total += k.tracer_path_insns;
    }
    text += ".";
    if (extra_total > 0) {
      text += fmt::format(" Of the {} extra instructions these syscalls executed, {} ({}) ran in "
                          "call paths that exist only with the tracer",
                          extra_total, path_total, Percent(static_cast<double>(path_total) / extra_total));
      std::map<std::string, uint64_t> by_name;
      for (const KindImpact& k : r.kinds)
        for (const TracerCode& c : k.tracer_paths) by_name[c.name] += c.insns;
      std::vector<std::pair<uint64_t, std::string>> top;
      for (const auto& [name, insns] : by_name) top.emplace_back(insns, name);
      std::sort(top.rbegin(), top.rend());
      if (!top.empty()) {
        text += ", entered through ";
        for (size_t i = 0; i < top.size() && i < 3; ++i)
          text += (i ? ", " : "") + top[i].second + " (" +
                  Percent(static_cast<double>(top[i].first) / std::max<uint64_t>(path_total, 1)) + ")";
      }
      text += ".";
    }
  }
  const double flow_change =
      r.insns_a ? 100.0 * (static_cast<double>(r.insns_b) - r.insns_a) / r.insns_a : 0;
  text += fmt::format(" Over the whole flow the traced run executed {} instructions against {} "
                      "({:+.1f}%), {} of them in functions that never run in the baseline.",
                      r.insns_b, r.insns_a, flow_change, r.flow_tracer_function_insns);
  return text;
}

}  // namespace

std::vector<TracerCode> NewPaths(const CallTree& a, const CallTree& b, uint64_t calls,
                                 double extra_per_call) {
  std::map<std::string, TracerCode> by_name;
  // Walk b and a together: a node of b without a counterpart in a is an outermost new frame.
  std::vector<std::pair<const CallTreeNode*, const CallTreeNode*>> work = {{&b.root(), &a.root()}};
  while (!work.empty()) {
    auto [node_b, node_a] = work.back();
    work.pop_back();
    for (const CallTreeNode* child : node_b->children) {
      const CallTreeNode* match = node_a->FindChild(child->name);
      if (match) {
        work.emplace_back(child, match);
        continue;
      }
      TracerCode& code = by_name[child->name];
      code.name = child->name;
      ++code.places;
      code.insns += child->total_insns;
    }
  }
  std::vector<TracerCode> codes;
  for (auto& [name, code] : by_name) codes.push_back(code);
  Finish(codes, calls, extra_per_call);
  return codes;
}

std::vector<TracerCode> NewFunctions(const std::vector<std::string>& names_a, const CallTree& b,
                                     uint64_t calls, double extra_per_call) {
  const std::set<std::string> known(names_a.begin(), names_a.end());
  std::map<std::string, TracerCode> by_name;
  b.ForEach([&](const CallTreeNode& node, int) {
    if (known.count(node.name)) return;
    TracerCode& code = by_name[node.name];
    code.name = node.name;
    ++code.places;
    code.insns += node.self_insns;
  });
  std::vector<TracerCode> codes;
  for (auto& [name, code] : by_name) codes.push_back(code);
  Finish(codes, calls, extra_per_call);
  return codes;
}

std::vector<FunctionChange> FunctionChanges(const CallTree& a, const CallTree& b) {
  std::map<std::string, FunctionChange> by_name;
  a.ForEach([&by_name](const CallTreeNode& node, int) {
    FunctionChange& f = by_name[node.name];
    f.calls_a += node.entries;
    f.insns_a += node.self_insns;
  });
  b.ForEach([&by_name](const CallTreeNode& node, int) {
    FunctionChange& f = by_name[node.name];
    f.calls_b += node.entries;
    f.insns_b += node.self_insns;
  });
  std::vector<FunctionChange> changes;
  for (auto& [name, change] : by_name) {
    change.name = name;
    changes.push_back(change);
  }
  auto delta = [](const FunctionChange& f) {
    return f.insns_a > f.insns_b ? f.insns_a - f.insns_b : f.insns_b - f.insns_a;
  };
  std::stable_sort(changes.begin(), changes.end(), [&delta](const auto& x, const auto& y) {
    return delta(x) > delta(y);
  });
  return changes;
}

ImpactResult CompareRuns(const std::string& baseline, const syscalls::SyscallRun& a,
                         const std::string& traced, const syscalls::SyscallRun& b) {
  ImpactResult r;
  r.baseline = baseline;
  r.traced = traced;
  r.timed = a.timed && b.timed;
  r.insns_a = a.instructions;
  r.insns_b = b.instructions;
  r.syscalls_a = a.instances.size();
  r.syscalls_b = b.instances.size();

  std::map<std::string, std::vector<const SyscallInstance*>> by_a, by_b;
  for (const SyscallInstance& s : a.instances) by_a[s.name].push_back(&s);
  for (const SyscallInstance& s : b.instances) by_b[s.name].push_back(&s);
  for (const auto& [name, list] : by_a)
    if (!by_b.count(name)) r.only_in_a.push_back(name);
  for (const auto& [name, list] : by_b)
    if (!by_a.count(name)) r.only_in_b.push_back(name);

  const std::vector<std::string> names_a = NamesOf(a.tree);
  for (const auto& [name, list_b] : by_b) {
    auto found = by_a.find(name);
    if (found == by_a.end() || name == syscalls::kUnknownSyscall) continue;
    const auto& list_a = found->second;
    KindImpact k;
    k.name = name;
    k.count_a = list_a.size();
    k.count_b = list_b.size();
    k.kernel_traced = true;
    for (const auto* s : list_a) k.kernel_traced &= s->kernel_traced;
    for (const auto* s : list_b) {
      k.kernel_traced &= s->kernel_traced;
      if (s->number >= 0) k.number = s->number;
    }
    auto insns_of = [&k](const SyscallInstance* s) {
      return k.kernel_traced ? s->kernel_insns : s->user_insns;
    };
    std::vector<uint64_t> ia, ib, la, lb;
    for (const auto* s : list_a) {
      ia.push_back(insns_of(s));
      if (s->time_known) la.push_back(s->latency_ns);
    }
    for (const auto* s : list_b) {
      ib.push_back(insns_of(s));
      if (s->time_known) lb.push_back(s->latency_ns);
    }
    k.insns_a = syscalls::Distribute(ia);
    k.insns_b = syscalls::Distribute(ib);
    k.latency_a = syscalls::Distribute(la);
    k.latency_b = syscalls::Distribute(lb);
    std::vector<int64_t> extra_insns, extra_ns;
    for (uint64_t v : ib) extra_insns.push_back(static_cast<int64_t>(v) - static_cast<int64_t>(k.insns_a.p50));
    if (!la.empty())
      for (uint64_t v : lb) extra_ns.push_back(static_cast<int64_t>(v) - static_cast<int64_t>(k.latency_a.p50));
    k.extra_insns = ExtraOver(extra_insns);
    k.extra_ns = ExtraOver(extra_ns);

    if (k.kernel_traced) {
      CallTree tree_a, tree_b;
      for (const auto* s : list_a) tree_a.Merge(s->kernel_tree);
      for (const auto* s : list_b) tree_b.Merge(s->kernel_tree);
      tree_a.Finalize();
      tree_b.Finalize();
      const double extra = k.insns_b.mean - k.insns_a.mean;
      k.tracer_paths = NewPaths(tree_a, tree_b, k.count_b, extra);
      k.tracer_path_insns = Sum(k.tracer_paths);
      k.tracer_functions = NewFunctions(names_a, tree_b, k.count_b, extra);
      k.tracer_function_insns = Sum(k.tracer_functions);
    }
    r.kinds.push_back(std::move(k));
  }
  std::stable_sort(r.kinds.begin(), r.kinds.end(),
                   [](const KindImpact& x, const KindImpact& y) { return x.count_b > y.count_b; });

  const double flow_extra = static_cast<double>(r.insns_b) - static_cast<double>(r.insns_a);
  r.flow_tracer_paths = NewPaths(a.tree, b.tree, 1, flow_extra);
  r.flow_tracer_path_insns = Sum(r.flow_tracer_paths);
  r.flow_tracer_functions = NewFunctions(names_a, b.tree, 1, flow_extra);
  r.flow_tracer_function_insns = Sum(r.flow_tracer_functions);
  r.functions = FunctionChanges(a.tree, b.tree);
  r.summary = Paragraph(r);
  return r;
}

}  // namespace ptprof::impact
