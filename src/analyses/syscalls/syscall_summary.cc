#include "src/analyses/syscalls/syscall_summary.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace ptprof::syscalls {

Distribution Distribute(std::vector<uint64_t> values) {
  Distribution d;
  d.count = values.size();
  if (values.empty()) return d;
  std::sort(values.begin(), values.end());
  auto rank = [&values](double p) {
    size_t index = static_cast<size_t>(std::ceil(p / 100.0 * values.size()));
    return values[index == 0 ? 0 : index - 1];
  };
  d.min = values.front();
  d.max = values.back();
  d.q1 = rank(25);
  d.p50 = rank(50);
  d.q3 = rank(75);
  d.p99 = rank(99);
  double sum = 0;
  for (uint64_t v : values) sum += static_cast<double>(v);
  d.mean = sum / values.size();
  return d;
}

std::vector<SyscallSummary> Summarize(const std::vector<SyscallInstance>& instances) {
  std::vector<const SyscallInstance*> all;
  for (const SyscallInstance& s : instances) all.push_back(&s);
  return Summarize(all);
}

std::vector<SyscallSummary> Summarize(const std::vector<const SyscallInstance*>& instances) {
  std::map<std::string, std::vector<const SyscallInstance*>> by_name;
  for (const SyscallInstance* s : instances) by_name[s->name].push_back(s);
  std::vector<SyscallSummary> summaries;
  for (const auto& [name, list] : by_name) {
    SyscallSummary summary;
    summary.name = name;
    summary.count = list.size();
    std::vector<uint64_t> latency, kernel, user;
    for (const SyscallInstance* s : list) {
      if (s->number >= 0) summary.number = s->number;
      summary.kernel_traced += s->kernel_traced;
      if (s->time_known) latency.push_back(s->latency_ns);
      kernel.push_back(s->kernel_insns);
      user.push_back(s->user_insns);
    }
    summary.latency_ns = Distribute(latency);
    summary.kernel_insns = Distribute(kernel);
    summary.user_insns = Distribute(user);
    summaries.push_back(std::move(summary));
  }
  std::stable_sort(summaries.begin(), summaries.end(),
                   [](const SyscallSummary& a, const SyscallSummary& b) { return a.count > b.count; });
  return summaries;
}

}  // namespace ptprof::syscalls
