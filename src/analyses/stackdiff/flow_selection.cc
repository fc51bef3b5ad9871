#include "src/analyses/stackdiff/flow_selection.h"

#include <cerrno>
#include <cstdlib>

namespace ptprof::stackdiff {

namespace {

// A trace offset (decimal or 0x hex) or, with `time`, a number of the clock's unit with an "ns"
// suffix.
std::optional<double> ParseBound(std::string text, bool time) {
  if (time) {
    if (text.size() < 3 || text.substr(text.size() - 2) != "ns") return std::nullopt;
    text.resize(text.size() - 2);
    char* end = nullptr;
    errno = 0;
    double value = std::strtod(text.c_str(), &end);
    if (end == text.c_str() || *end || errno || value < 0) return std::nullopt;
    return value;
  }
  if (text.empty() || text[0] == '-' || text[0] == '+') return std::nullopt;
  char* end = nullptr;
  errno = 0;
  unsigned long long value = std::strtoull(text.c_str(), &end, 0);
  if (end == text.c_str() || *end || errno) return std::nullopt;
  return static_cast<double>(value);
}

}  // namespace

Result<FlowRange> ParseFlowRange(const std::string& text) {
  const size_t dots = text.find("..");
  const std::string expected = "--interval '" + text +
                               "': expected FROM..TO, both trace offsets (0x1000..0x2000) or both "
                               "times with an ns suffix (1500ns..2500ns)";
  if (dots == std::string::npos) return Fail(expected);
  const std::string from = text.substr(0, dots), to = text.substr(dots + 2);
  FlowRange range;
  range.text = text;
  const bool time = from.size() > 2 && from.substr(from.size() - 2) == "ns";
  range.kind = time ? FlowRange::Kind::kTime : FlowRange::Kind::kOffset;
  auto lo = ParseBound(from, time), hi = ParseBound(to, time);
  if (!lo || !hi) return Fail(expected);
  if (*hi < *lo) return Fail("--interval '" + text + "': TO is before FROM");
  range.from = *lo;
  range.to = *hi;
  return range;
}

bool FlowSelection::TimeInRange(double time) const {
  return time >= spec_.range->from && time <= spec_.range->to;
}

bool FlowSelection::InRange(const EventHeader& header, bool& undecided) {
  undecided = false;
  if (!spec_.range) return true;
  const FlowRange& range = *spec_.range;
  if (range.kind == FlowRange::Kind::kOffset) {
    const double offset = static_cast<double>(header.offset);
    return offset >= range.from && offset <= range.to;
  }
  std::optional<double> time = spec_.time_of ? spec_.time_of(header) : std::nullopt;
  if (time) last_time_[header.cpu] = *time;
  else if (auto it = last_time_.find(header.cpu); it != last_time_.end()) time = it->second;
  else undecided = owned_next_ != nullptr;  // a part's: the stream may have had a time
  return time && TimeInRange(*time);
}

void FlowSelection::OnEvent(const TraceEvent& event) {
  ++seen_;
  bool undecided = false;
  const bool in_range = InRange(event.header, undecided);  // always, to follow the time
  if (spec_.tid && event.header.tid != *spec_.tid) return;
  if (undecided) ++left_out_[event.header.cpu];
  if (!in_range) return;
  ++passed_;
  if (std::holds_alternative<ExecBlock>(event.body)) ++blocks_;
  next_.OnEvent(event);
}

void FlowSelection::OnBlocks(const BlockBatch& batch) {
  if (spec_.range) {
    const FlowRange& range = *spec_.range;
    bool whole = range.kind == FlowRange::Kind::kOffset;
    for (size_t i = 0; whole && i < batch.blocks.size(); ++i) {
      const double offset = static_cast<double>(batch.blocks[i].offset);
      whole = offset >= range.from && offset <= range.to;
    }
    if (!whole) return EventSink::OnBlocks(batch);  // a time range follows every block's time
  }
  seen_ += batch.blocks.size();
  if (spec_.tid && batch.tid != *spec_.tid) return;
  passed_ += batch.blocks.size();
  blocks_ += batch.blocks.size();
  next_.OnBlocks(batch);
}

bool FlowSelection::TakesParts() const {
  const PartedSink* next = NextInParts();
  return next && next->TakesParts();
}

std::unique_ptr<EventSink> FlowSelection::MakePart(std::unique_ptr<EventSink> next) const {
  auto part = std::make_unique<FlowSelection>(spec_, *next);
  part->owned_next_ = std::move(next);
  return part;
}

std::unique_ptr<EventSink> FlowSelection::NewPart() const {
  return MakePart(NextInParts()->NewPart());
}

std::unique_ptr<EventSink> FlowSelection::NewFirstPart() const {
  return MakePart(NextInParts()->NewFirstPart());
}

std::string FlowSelection::Refusal(const EventSink& part) const {
  const auto& selection = static_cast<const FlowSelection&>(part);
  for (const auto& [cpu, count] : selection.left_out_)
    if (auto it = last_time_.find(cpu); it != last_time_.end() && TimeInRange(it->second))
      return "its first events on cpu " + std::to_string(cpu) + " have no time of their own and " +
             "the one before the part is inside --interval " + spec_.range->text;
  return NextInParts()->Refusal(*selection.owned_next_);
}

void FlowSelection::Fold(std::unique_ptr<EventSink> part) {
  auto& selection = static_cast<FlowSelection&>(*part);
  seen_ += selection.seen_;
  passed_ += selection.passed_;
  blocks_ += selection.blocks_;
  for (const auto& [cpu, time] : selection.last_time_) last_time_[cpu] = time;
  NextInParts()->Fold(std::move(selection.owned_next_));
}

}  // namespace ptprof::stackdiff
