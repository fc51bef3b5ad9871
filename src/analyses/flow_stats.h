#pragma once
// FlowStats answers "what did this decode contain?": how many instructions and blocks, how the
// blocks ended, how many gaps and of which kind, which toggles and other events, the time span, and
// which functions executed the most instructions. It is the summary under `ptprof decode --summary`.
#include <array>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "src/model/parted_sink.h"

namespace ptprof {

// Everything it counts adds up (sums, and the first and last time as the least and greatest), so
// in parts (src/model/parted_sink.h) each part counts its own and Fold adds them; `function_of`
// is then called on several threads at once. A flow repeats its blocks, so the function of an
// address is asked for once per address it keeps (the last 4096 met), and blocks are counted
// as they come in their batches, by their end's number rather than its name.
class FlowStats : public PartedSink {
 public:
  // `function_of` names the function containing an address ("" when unknown); when not given,
  // per-function counts are not kept.
  explicit FlowStats(std::function<std::string(uint64_t ip)> function_of = {});

  void OnEvent(const TraceEvent& event) override;
  void OnBlocks(const BlockBatch& batch) override;
  std::unique_ptr<EventSink> NewPart() const override;
  void Fold(std::unique_ptr<EventSink> part) override;

  uint64_t instructions() const { return instructions_; }
  uint64_t blocks() const { return blocks_; }
  uint64_t gaps() const { return gaps_; }
  std::map<std::string, uint64_t> exits() const;
  const std::map<std::string, uint64_t>& gap_reasons() const { return gap_reasons_; }
  const std::map<std::string, uint64_t>& events() const { return events_; }
  std::map<std::string, uint64_t> insns_by_function() const;

  // Writes the summary as text (one item per line) or as one JSON object.
  void WriteText(std::FILE* out, size_t top_functions = 10) const;
  void WriteJson(std::FILE* out) const;

 private:
  // The function of one of the last 4096 addresses met, kept by a hash of the address
  // (kNoFunction: none kept).
  static constexpr int kKeptBits = 12;
  static constexpr uint32_t kNoFunction = UINT32_MAX;
  struct KeptAddress {
    uint64_t ip = 0;
    uint32_t function = kNoFunction;
  };

  void CountTime(const EventHeader& header);
  void CountTsc(uint64_t tsc);
  void CountNs(uint64_t ns);
  // Adds `insns` to the function at `ip` (when functions are counted).
  void CountFunction(uint64_t ip, uint64_t insns) {
    KeptAddress& kept = kept_[(ip * 0x9e3779b97f4a7c15ull) >> (64 - kKeptBits)];
    if (kept.function == kNoFunction || kept.ip != ip) [[unlikely]]
      Keep(kept, ip);
    function_insns_[kept.function] += insns;
  }
  // Keeps the function at `ip` in `kept`.
  void Keep(KeptAddress& kept, uint64_t ip);
  uint32_t FunctionNamed(const std::string& name);

  std::function<std::string(uint64_t)> function_of_;
  uint64_t instructions_ = 0;
  uint64_t blocks_ = 0;
  uint64_t gaps_ = 0;
  uint64_t first_tsc_ = UINT64_MAX, last_tsc_ = 0;
  uint64_t first_ns_ = UINT64_MAX, last_ns_ = 0;
  std::array<uint64_t, 256> exits_{};  // blocks by BlockEnd's number
  std::map<std::string, uint64_t> gap_reasons_;
  std::map<std::string, uint64_t> events_;
  // Instructions per function ("[unknown]" for addresses without one), each named once.
  std::vector<std::string> function_names_;
  std::vector<uint64_t> function_insns_;
  std::unordered_map<std::string, uint32_t> function_index_;
  std::vector<KeptAddress> kept_;  // empty when functions are not counted
};

}  // namespace ptprof
