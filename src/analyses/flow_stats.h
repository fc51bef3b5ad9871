#pragma once
// FlowStats answers "what did this decode contain?": how many instructions and blocks, how the
// blocks ended, how many gaps and of which kind, which toggles and other events, the time span, and
// which functions executed the most instructions. It is the summary under `ptprof decode --summary`.
#include <cstdint>
#include <cstdio>
#include <functional>
#include <map>
#include <string>

#include "src/model/parted_sink.h"

namespace ptprof {

// Everything it counts adds up (sums, and the first and last time as the least and greatest), so
// in parts (src/model/parted_sink.h) each part counts its own and Fold adds them; `function_of`
// is then called on several threads at once.
class FlowStats : public PartedSink {
 public:
  // `function_of` names the function containing an address ("" when unknown); when not given,
  // per-function counts are not kept.
  explicit FlowStats(std::function<std::string(uint64_t ip)> function_of = {});

  void OnEvent(const TraceEvent& event) override;
  std::unique_ptr<EventSink> NewPart() const override;
  void Fold(std::unique_ptr<EventSink> part) override;

  uint64_t instructions() const { return instructions_; }
  uint64_t blocks() const { return blocks_; }
  uint64_t gaps() const { return gaps_; }
  const std::map<std::string, uint64_t>& exits() const { return exits_; }
  const std::map<std::string, uint64_t>& gap_reasons() const { return gap_reasons_; }
  const std::map<std::string, uint64_t>& events() const { return events_; }
  const std::map<std::string, uint64_t>& insns_by_function() const { return by_function_; }

  // Writes the summary as text (one item per line) or as one JSON object.
  void WriteText(std::FILE* out, size_t top_functions = 10) const;
  void WriteJson(std::FILE* out) const;

 private:
  void CountTime(const EventHeader& header);
  void CountFunction(uint64_t ip, uint64_t insns);

  std::function<std::string(uint64_t)> function_of_;
  uint64_t instructions_ = 0;
  uint64_t blocks_ = 0;
  uint64_t gaps_ = 0;
  uint64_t first_tsc_ = UINT64_MAX, last_tsc_ = 0;
  uint64_t first_ns_ = UINT64_MAX, last_ns_ = 0;
  std::map<std::string, uint64_t> exits_;
  std::map<std::string, uint64_t> gap_reasons_;
  std::map<std::string, uint64_t> events_;
  std::map<std::string, uint64_t> by_function_;
};

}  // namespace ptprof
