#include "src/analyses/flow_stats.h"

#include <algorithm>
#include <cinttypes>
#include <vector>

#include <nlohmann/json.hpp>

namespace ptprof {

namespace {

std::vector<std::pair<std::string, uint64_t>> TopEntries(const std::map<std::string, uint64_t>& m,
                                                         size_t n) {
  std::vector<std::pair<std::string, uint64_t>> v(m.begin(), m.end());
  std::stable_sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  if (v.size() > n) v.resize(n);
  return v;
}

}  // namespace

FlowStats::FlowStats(std::function<std::string(uint64_t)> function_of)
    : function_of_(std::move(function_of)) {
  if (function_of_) kept_.resize(size_t{1} << kKeptBits);
}

void FlowStats::CountTsc(uint64_t tsc) {
  if (tsc == kUnknownTime) return;
  first_tsc_ = std::min(first_tsc_, tsc);
  last_tsc_ = std::max(last_tsc_, tsc);
}

void FlowStats::CountNs(uint64_t ns) {
  if (ns == kUnknownTime) return;
  first_ns_ = std::min(first_ns_, ns);
  last_ns_ = std::max(last_ns_, ns);
}

void FlowStats::CountTime(const EventHeader& h) {
  CountTsc(h.tsc);
  CountNs(h.time_ns);
}

uint32_t FlowStats::FunctionNamed(const std::string& name) {
  const auto [it, added] =
      function_index_.try_emplace(name, static_cast<uint32_t>(function_names_.size()));
  if (added) {
    function_names_.push_back(name);
    function_insns_.push_back(0);
  }
  return it->second;
}

void FlowStats::Keep(KeptAddress& kept, uint64_t ip) {
  const std::string name = function_of_(ip);
  kept.ip = ip;
  kept.function = FunctionNamed(name.empty() ? "[unknown]" : name);
}

void FlowStats::OnEvent(const TraceEvent& event) {
  CountTime(event.header);
  if (const auto* block = std::get_if<ExecBlock>(&event.body)) {
    ++blocks_;
    instructions_ += block->insns;
    ++exits_[static_cast<uint8_t>(block->end)];
    if (function_of_) CountFunction(block->first_ip, block->insns);
  } else if (const auto* insn = std::get_if<Instruction>(&event.body)) {
    ++instructions_;
    if (function_of_) CountFunction(insn->ip, 1);
  } else if (const auto* gap = std::get_if<TraceGap>(&event.body)) {
    ++gaps_;
    ++gap_reasons_[GapReasonName(gap->reason)];
  } else {
    ++events_[EventName(event)];
  }
}

// What OnEvent does with each block's event, read from the packed blocks as they are.
void FlowStats::OnBlocks(const BlockBatch& batch) {
  blocks_ += batch.blocks.size();
  const bool functions = static_cast<bool>(function_of_);
  for (size_t i = 0; i < batch.blocks.size(); ++i) {
    const PackedEvent& block = batch.blocks[i];
    instructions_ += block.insns;
    ++exits_[block.end];
    CountTsc(block.tsc);
    if (batch.clock) CountNs(batch.TimeNs(i));
    if (functions) CountFunction(block.first_ip_or_index, block.insns);
  }
}

std::map<std::string, uint64_t> FlowStats::exits() const {
  std::map<std::string, uint64_t> by_name;
  for (size_t end = 0; end < exits_.size(); ++end)
    if (exits_[end]) by_name[BlockEndName(static_cast<BlockEnd>(end))] += exits_[end];
  return by_name;
}

std::map<std::string, uint64_t> FlowStats::insns_by_function() const {
  std::map<std::string, uint64_t> by_name;
  for (size_t i = 0; i < function_names_.size(); ++i) by_name[function_names_[i]] += function_insns_[i];
  return by_name;
}

std::unique_ptr<EventSink> FlowStats::NewPart() const {
  return std::make_unique<FlowStats>(function_of_);
}

void FlowStats::Fold(std::unique_ptr<EventSink> part) {
  const auto& other = static_cast<const FlowStats&>(*part);
  instructions_ += other.instructions_;
  blocks_ += other.blocks_;
  gaps_ += other.gaps_;
  first_tsc_ = std::min(first_tsc_, other.first_tsc_);
  last_tsc_ = std::max(last_tsc_, other.last_tsc_);
  first_ns_ = std::min(first_ns_, other.first_ns_);
  last_ns_ = std::max(last_ns_, other.last_ns_);
  auto add = [](std::map<std::string, uint64_t>& to, const std::map<std::string, uint64_t>& from) {
    for (const auto& [name, count] : from) to[name] += count;
  };
  for (size_t end = 0; end < exits_.size(); ++end) exits_[end] += other.exits_[end];
  add(gap_reasons_, other.gap_reasons_);
  add(events_, other.events_);
  for (size_t i = 0; i < other.function_names_.size(); ++i)
    function_insns_[FunctionNamed(other.function_names_[i])] += other.function_insns_[i];
}

void FlowStats::WriteText(std::FILE* out, size_t top_functions) const {
  std::fprintf(out, "summary:\n");
  std::fprintf(out, "  instructions  %" PRIu64 "\n", instructions_);
  if (blocks_) std::fprintf(out, "  blocks        %" PRIu64 "\n", blocks_);
  std::fprintf(out, "  gaps          %" PRIu64 "\n", gaps_);
  for (const auto& [reason, count] : gap_reasons_)
    std::fprintf(out, "    %-12s %" PRIu64 "\n", reason.c_str(), count);
  if (first_tsc_ != UINT64_MAX)
    std::fprintf(out, "  tsc span      %" PRIu64 " ticks (0x%" PRIx64 "..0x%" PRIx64 ")\n",
                 last_tsc_ - first_tsc_, first_tsc_, last_tsc_);
  if (first_ns_ != UINT64_MAX)
    std::fprintf(out, "  time span     %" PRIu64 " ns\n", last_ns_ - first_ns_);
  if (const auto exits = this->exits(); !exits.empty()) {
    std::fprintf(out, "  block exits\n");
    for (const auto& [name, count] : TopEntries(exits, exits.size()))
      std::fprintf(out, "    %-14s %" PRIu64 "\n", name.c_str(), count);
  }
  if (!events_.empty()) {
    std::fprintf(out, "  events\n");
    for (const auto& [name, count] : TopEntries(events_, events_.size()))
      std::fprintf(out, "    %-14s %" PRIu64 "\n", name.c_str(), count);
  }
  if (const auto by_function = insns_by_function(); !by_function.empty()) {
    std::fprintf(out, "  top functions by instructions\n");
    for (const auto& [name, count] : TopEntries(by_function, top_functions))
      std::fprintf(out, "    %10" PRIu64 "  %5.1f%%  %s\n", count,
                   instructions_ ? 100.0 * static_cast<double>(count) / static_cast<double>(instructions_) : 0.0,
                   name.c_str());
  }
}

void FlowStats::WriteJson(std::FILE* out) const {
  nlohmann::ordered_json summary;
  summary["instructions"] = instructions_;
  summary["blocks"] = blocks_;
  summary["gaps"] = gaps_;
  summary["gap_reasons"] = gap_reasons_;
  summary["exits"] = exits();
  summary["events"] = events_;
  summary["functions"] = insns_by_function();
  if (first_tsc_ != UINT64_MAX) {
    summary["first_tsc"] = first_tsc_;
    summary["last_tsc"] = last_tsc_;
  }
  if (first_ns_ != UINT64_MAX) {
    summary["first_time"] = first_ns_;
    summary["last_time"] = last_ns_;
  }
  nlohmann::ordered_json root;
  root["summary"] = std::move(summary);
  std::fputs((root.dump() + "\n").c_str(), out);
}

}  // namespace ptprof
