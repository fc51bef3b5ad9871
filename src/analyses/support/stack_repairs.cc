#include "src/analyses/support/stack_repairs.h"

#include <vector>

namespace ptprof {

namespace {

struct NamedCount {
  const char* name;
  uint64_t value;
};

std::vector<NamedCount> Fields(const RepairCounts& c) {
  return {{"stack_starts", c.stack_starts},
          {"returns_above_start", c.returns_above_start},
          {"tail_calls", c.tail_calls},
          {"unwinds", c.unwinds},
          {"frames_unwound", c.frames_unwound},
          {"unmatched_returns", c.unmatched_returns},
          {"unmatched_kernel_exits", c.unmatched_kernel_exits},
          {"gap_resets", c.gap_resets},
          {"untraced_syscalls", c.untraced_syscalls},
          {"local_calls", c.local_calls}};
}

}  // namespace

std::string RepairCountsText(const RepairCounts& counts) {
  std::string text;
  for (const NamedCount& field : Fields(counts)) {
    if (!text.empty()) text += ", ";
    std::string name = field.name;
    for (char& c : name)
      if (c == '_') c = ' ';
    text += name + " " + std::to_string(field.value);
  }
  return text;
}

std::string RepairCountsJson(const RepairCounts& counts) {
  std::string json = "{";
  for (const NamedCount& field : Fields(counts)) {
    if (json.size() > 1) json += ",";
    json += "\"" + std::string(field.name) + "\":" + std::to_string(field.value);
  }
  return json + "}";
}

}  // namespace ptprof
