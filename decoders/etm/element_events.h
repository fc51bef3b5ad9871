#pragma once
// ElementTranslator answers "what does this OpenCSD generic trace element mean in ptprof's
// model?": instruction ranges become ExecBlocks, exceptions Exception events, PE context
// PeContext events, no-sync / inaccessible memory / ranges without a path become TraceGaps,
// timestamps and cycle counts Markers (the timestamp also stamps the events that follow).
// Every element kind yields exactly one event, so that an element listing can be rebuilt.
#include <cstdint>
#include <map>

#include <opencsd/c_api/opencsd_c_api.h>

#include "src/model/trace_event.h"

namespace ptprof::etm {

class ElementTranslator {
 public:
  // `cpu_of_trace_id` gives the cpu stamped into events of each trace ID (absent: unknown).
  explicit ElementTranslator(std::map<uint8_t, int32_t> cpu_of_trace_id)
      : cpu_of_trace_id_(std::move(cpu_of_trace_id)) {}

  TraceEvent Translate(const ocsd_generic_trace_elem& elem, uint64_t index, uint8_t trace_id);

 private:
  std::map<uint8_t, int32_t> cpu_of_trace_id_;
  std::map<uint8_t, uint64_t> timestamp_of_trace_id_;
};

ExecMode ModeOfIsa(ocsd_isa isa);
BlockEnd BlockEndOf(const ocsd_generic_trace_elem& range);

}  // namespace ptprof::etm
