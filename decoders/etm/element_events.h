#pragma once
// ElementTranslator answers "what does this OpenCSD generic trace element mean in ptprof's
// model?": instruction ranges become ExecBlocks, exceptions Exception events, PE context
// PeContext events, no-sync / inaccessible memory / ranges without a path become TraceGaps,
// timestamps and cycle counts Markers (the timestamp also stamps the events that follow).
// Every element kind yields exactly one event, so that an element listing can be rebuilt.
#include <array>
#include <bitset>
#include <cstdint>
#include <map>

#include <opencsd/c_api/opencsd_c_api.h>

#include "src/model/trace_event.h"

namespace ptprof::etm {

class ElementTranslator {
 public:
  // `cpu_of_trace_id` gives the cpu stamped into events of each trace ID (absent: unknown).
  explicit ElementTranslator(const std::map<uint8_t, int32_t>& cpu_of_trace_id) {
    cpu_of_trace_id_.fill(kUnknownId);
    for (const auto& [id, cpu] : cpu_of_trace_id) cpu_of_trace_id_[id] = cpu;
  }

  TraceEvent Translate(const ocsd_generic_trace_elem& elem, uint64_t index, uint8_t trace_id);

 private:
  // By trace ID (an element's channel, one byte): looked up for every element.
  std::array<int32_t, 256> cpu_of_trace_id_;
  std::array<uint64_t, 256> timestamp_of_trace_id_;
  std::bitset<256> has_timestamp_;
};

// Whether `event` is the translation of OpenCSD's "no sync" element (its source's decoder waits
// for an alignment synchronisation), and whether it is the one a fresh decoder starts with.
bool IsNoSync(const TraceEvent& event);
bool IsDecoderStart(const TraceEvent& event);
// Whether `event` is an end-of-trace marker: flushed at the end of the buffer, it has no offset
// of its own (0).
bool IsEndOfTrace(const TraceEvent& event);

ExecMode ModeOfIsa(const ocsd_isa& isa);
BlockEnd BlockEndOf(const ocsd_generic_trace_elem& range);

}  // namespace ptprof::etm
