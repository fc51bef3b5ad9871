#include "src/analyses/syscalls/syscall_report.h"

#include <cinttypes>
#include <functional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "src/model/json_text.h"

namespace ptprof::syscalls {

namespace {

using nlohmann::ordered_json;

std::string Number(int64_t number) { return number < 0 ? "-" : std::to_string(number); }

ordered_json DistributionJson(const Distribution& d) {
  return {{"count", d.count}, {"min", d.min}, {"q1", d.q1}, {"p50", d.p50}, {"q3", d.q3},
          {"p99", d.p99},     {"max", d.max}, {"mean", d.mean}};
}

ordered_json TreeJson(const CallTreeNode& node) {
  ordered_json j = {{"name", node.name},           {"entries", node.entries},
                    {"self_insns", node.self_insns}, {"total_insns", node.total_insns},
                    {"self_ns", node.self_ns},       {"total_ns", node.total_ns}};
  ordered_json children = ordered_json::array();
  for (const auto& child : node.children) children.push_back(TreeJson(*child));
  j["children"] = std::move(children);
  return j;
}

ordered_json InstanceJson(const SyscallInstance& s, bool timed) {
  ordered_json j = {{"name", s.name},
                    {"number", s.number < 0 ? ordered_json(nullptr) : ordered_json(s.number)},
                    {"number_from", s.number_source.empty() ? ordered_json(nullptr)
                                                            : ordered_json(s.number_source)},
                    {"pid", s.pid},
                    {"tid", s.tid},
                    {"cpu", s.cpu},
                    {"syscall_ip", fmt::format("{:#x}", s.syscall_ip)},
                    {"caller", s.caller}};
  j["start_ns"] = timed && s.time_known ? ordered_json(s.start_ns) : ordered_json(nullptr);
  j["latency_ns"] = timed && s.time_known ? ordered_json(s.latency_ns) : ordered_json(nullptr);
  j["user_insns"] = s.user_insns;
  j["kernel_traced"] = s.kernel_traced;
  j["kernel_insns"] = s.kernel_insns;
  if (s.kernel_traced && !s.kernel_tree.root().children.empty())
    j["kernel_tree"] = TreeJson(*s.kernel_tree.root().children.front());
  return j;
}

void WriteTree(std::FILE* out, const CallTree& tree) {
  tree.ForEach([out](const CallTreeNode& node, int depth) {
    std::fprintf(out, "      %*s%s  x%" PRIu64 "  %" PRIu64 " insns (self %" PRIu64 ")\n",
                 depth * 2, "", node.name.c_str(), node.entries, node.total_insns, node.self_insns);
  });
}

}  // namespace

std::string FormatNs(double ns) {
  if (ns >= 1e9) return fmt::format("{:.3f} s", ns / 1e9);
  if (ns >= 1e6) return fmt::format("{:.3f} ms", ns / 1e6);
  if (ns >= 1e3) return fmt::format("{:.2f} us", ns / 1e3);
  return fmt::format("{:.0f} ns", ns);
}

void WriteSyscallText(std::FILE* out, const SyscallReport& report) {
  const SyscallRun& run = *report.run;
  std::fprintf(out, "%s: %zu syscalls shown (%zu in the trace), %" PRIu64 " instructions decoded%s\n",
               report.input.c_str(), report.instances.size(), run.instances.size(),
               run.instructions, run.timed ? "" : ", no time base: latencies unknown");
  auto latency = [&run](double ns) { return run.timed ? FormatNs(ns) : std::string("-"); };
  if (report.list_instances) {
    std::fprintf(out, "%14s %7s %-16s %5s %12s %10s %11s  %s\n", "start", "tid", "syscall", "nr",
                 "latency", "user_insns", "kernel_insns", "caller");
    for (const SyscallInstance* s : report.instances) {
      std::fprintf(out, "%14s %7d %-16s %5s %12s %10" PRIu64 " %11s  %s\n",
                   run.timed && s->time_known ? FormatNs(s->start_ns).c_str() : "-",
                   s->tid >= 0 ? s->tid : s->cpu, s->name.c_str(), Number(s->number).c_str(),
                   latency(s->latency_ns).c_str(), s->user_insns,
                   s->kernel_traced ? std::to_string(s->kernel_insns).c_str() : "-",
                   s->caller.c_str());
      if (report.trees && s->kernel_traced) WriteTree(out, s->kernel_tree);
    }
  } else {
    std::fprintf(out, "%-16s %5s %6s %11s %11s %11s %12s %12s %12s\n", "syscall", "nr", "count",
                 "lat_p50", "lat_p99", "lat_max", "kinsns_p50", "kinsns_p99", "kinsns_max");
    for (const SyscallSummary& s : report.summaries) {
      const bool kernel = s.kernel_traced > 0;
      std::fprintf(out, "%-16s %5s %6" PRIu64 " %11s %11s %11s %12s %12s %12s\n", s.name.c_str(),
                   Number(s.number).c_str(), s.count, latency(s.latency_ns.p50).c_str(),
                   latency(s.latency_ns.p99).c_str(), latency(s.latency_ns.max).c_str(),
                   kernel ? std::to_string(s.kernel_insns.p50).c_str() : "-",
                   kernel ? std::to_string(s.kernel_insns.p99).c_str() : "-",
                   kernel ? std::to_string(s.kernel_insns.max).c_str() : "-");
    }
  }
  uint64_t unknown = 0, untraced = 0;
  for (const SyscallInstance* s : report.instances) {
    unknown += s->number < 0 && s->name == kUnknownSyscall;
    untraced += !s->kernel_traced;
  }
  if (unknown)
    std::fprintf(out, "unknown: %" PRIu64 " syscalls whose number neither the kernel path nor the "
                      "user code before them shows\n", unknown);
  if (untraced)
    std::fprintf(out, "kernel not traced: %" PRIu64 " syscalls (user-only trace: latency is the "
                      "time the trace was off)\n", untraced);
  std::fprintf(out, "stack repairs: %s\n", RepairCountsText(run.repairs).c_str());
  if (run.counts.cut_by_gap || run.counts.open_at_end)
    std::fprintf(out, "dropped: %" PRIu64 " syscalls cut by a gap, %" PRIu64 " open at the end\n",
                 run.counts.cut_by_gap, run.counts.open_at_end);
}

void WriteSyscallJson(std::FILE* out, const SyscallReport& report) {
  const SyscallRun& run = *report.run;
  ordered_json j;
  j["input"] = report.input;
  j["timed"] = run.timed;
  j["instructions"] = run.instructions;
  j["syscalls_in_trace"] = run.instances.size();
  ordered_json summaries = ordered_json::array();
  for (const SyscallSummary& s : report.summaries)
    summaries.push_back({{"name", s.name},
                         {"number", s.number < 0 ? ordered_json(nullptr) : ordered_json(s.number)},
                         {"count", s.count},
                         {"kernel_traced", s.kernel_traced},
                         {"latency_ns", DistributionJson(s.latency_ns)},
                         {"kernel_insns", DistributionJson(s.kernel_insns)},
                         {"user_insns", DistributionJson(s.user_insns)}});
  j["summary"] = std::move(summaries);
  if (report.list_instances) {
    ordered_json instances = ordered_json::array();
    for (const SyscallInstance* s : report.instances) instances.push_back(InstanceJson(*s, run.timed));
    j["instances"] = std::move(instances);
  }
  j["repairs"] = ordered_json::parse(RepairCountsJson(run.repairs));
  j["dropped"] = {{"cut_by_gap", run.counts.cut_by_gap}, {"open_at_end", run.counts.open_at_end}};
  std::fprintf(out, "%s\n", j.dump(2).c_str());
}

void WriteSyscallCsv(std::FILE* out, const SyscallReport& report) {
  const SyscallRun& run = *report.run;
  if (report.list_instances) {
    std::fprintf(out, "start_ns,pid,tid,cpu,syscall,number,latency_ns,user_insns,kernel_insns,caller\n");
    for (const SyscallInstance* s : report.instances) {
      const bool timed = run.timed && s->time_known;
      std::fprintf(out, "%s,%d,%d,%d,%s,%s,%s,%" PRIu64 ",%s,%s\n",
                   timed ? std::to_string(s->start_ns).c_str() : "", s->pid, s->tid, s->cpu,
                   s->name.c_str(), s->number < 0 ? "" : std::to_string(s->number).c_str(),
                   timed ? std::to_string(s->latency_ns).c_str() : "", s->user_insns,
                   s->kernel_traced ? std::to_string(s->kernel_insns).c_str() : "",
                   CsvField(s->caller).c_str());
    }
    return;
  }
  std::fprintf(out, "syscall,number,count,latency_p50_ns,latency_p99_ns,latency_max_ns,"
                    "kernel_insns_p50,kernel_insns_p99,kernel_insns_max\n");
  for (const SyscallSummary& s : report.summaries)
    std::fprintf(out, "%s,%s,%" PRIu64 ",%s,%s,%s,%" PRIu64 ",%" PRIu64 ",%" PRIu64 "\n",
                 s.name.c_str(), s.number < 0 ? "" : std::to_string(s.number).c_str(), s.count,
                 run.timed ? std::to_string(s.latency_ns.p50).c_str() : "",
                 run.timed ? std::to_string(s.latency_ns.p99).c_str() : "",
                 run.timed ? std::to_string(s.latency_ns.max).c_str() : "", s.kernel_insns.p50,
                 s.kernel_insns.p99, s.kernel_insns.max);
}

}  // namespace ptprof::syscalls
