#include "src/analyses/sweep/sweep_workloads.h"

#include <unistd.h>

#include <cctype>
#include <cstdlib>

namespace ptprof::sweep {

const std::vector<KnownWorkload>& KnownWorkloads() {
  static const std::vector<KnownWorkload> kWorkloads = {
      {"TailFact", "sweep_tailfact", "factorials by tail calls through a pointer (indirect jumps)"},
      {"Fib", "sweep_fib", "doubly recursive Fibonacci (calls, returns)"},
      {"ParseInt", "sweep_parseint", "print and parse hexadecimal numbers (libc)"},
      {"PiSum", "sweep_pisum", "sum of 1/k^2, a tight floating-point loop"},
      {"Sort", "sweep_sort", "quicksort of random doubles (data-dependent branches)"},
      {"RandMatMul", "sweep_randmatmul", "blocked multiply of random 160x160 matrices"},
      {"RandMatStat", "sweep_randmatstat", "traces of (P'P)^4 and (Q'Q)^4 of random matrices"},
      {"CannyNoOptimize", "sweep_canny_O0", "Canny edge detector built with -O0"},
      {"CannyOptimize", "sweep_canny_O2", "Canny edge detector built with -O2"},
      {"Omega", "sweep_omega", "a loop with one extra conditional branch per iteration"},
      {"Epsilon", "sweep_epsilon", "the empty loop"},
  };
  return kWorkloads;
}

namespace {

std::string Lower(const std::string& text) {
  std::string lower;
  for (char c : text) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return lower;
}

std::string ExecutableDir() {
  char path[4096];
  ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
  if (n <= 0) return ".";
  std::string exe(path, static_cast<size_t>(n));
  return exe.substr(0, exe.rfind('/'));
}

}  // namespace

std::string DefaultWorkloadDir() {
  if (const char* env = std::getenv("PTPROF_SWEEP_WORKLOADS"); env != nullptr && *env != '\0')
    return env;
  const std::string dir = ExecutableDir();
  const std::string build_tree = dir + "/tools/workloads";
  if (access(build_tree.c_str(), X_OK) == 0) return build_tree;
  return dir + "/../lib/ptprof/workloads";
}

Result<std::vector<Workload>> ResolveWorkloads(const std::vector<std::string>& names,
                                               const std::string& dir) {
  std::vector<Workload> workloads;
  auto add_known = [&](const KnownWorkload& known) {
    workloads.push_back({known.name, dir + "/" + known.binary, known.what});
  };
  if (names.empty()) {
    for (const KnownWorkload& known : KnownWorkloads()) add_known(known);
    return workloads;
  }
  for (const std::string& name : names) {
    if (name.find('/') != std::string::npos) {
      workloads.push_back({name.substr(name.rfind('/') + 1), name, "a program given by path"});
      continue;
    }
    const KnownWorkload* found = nullptr;
    for (const KnownWorkload& known : KnownWorkloads())
      if (Lower(known.name) == Lower(name)) found = &known;
    if (found == nullptr) {
      std::string list;
      for (const KnownWorkload& known : KnownWorkloads())
        list += std::string(list.empty() ? "" : ", ") + known.name;
      return Fail("--workload " + name + ": unknown workload (known: " + list +
                  "; or a path to a program)");
    }
    add_known(*found);
  }
  return workloads;
}

}  // namespace ptprof::sweep
