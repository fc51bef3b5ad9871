#include "src/record/intel_pt/sideband_facts.h"

#include <algorithm>
#include <variant>

#include "sideband/perf/perf_abi.h"
#include "sideband/perf/perf_record.h"

namespace ptprof::record::hw {

SidebandFacts ReadSidebandFacts(const HwAttr& attr, const std::vector<uint8_t>& sideband,
                                uint32_t traced_pid) {
  SidebandFacts facts;
  perf::PerfEventAttr layout;
  layout.sample_type = attr.attr.sample_type;
  layout.flags = attr.attr.sample_id_all ? (uint64_t{1} << 18) : 0;
  auto records = perf::ParsePerfEventBuffer(sideband, layout, "the AUX events' sideband");
  if (!records) {
    facts.problem = records.error().message;
    return facts;
  }
  for (const perf::PerfRecord& r : *records) {
    const uint32_t type = r.header.type;
    if (const auto* m = std::get_if<perf::MmapRecord>(&r.body)) {
      if (m->executable && !m->filename.empty() && m->filename[0] == '/')
        facts.mappings.push_back(perf::PerfMapping{m->addr, m->len, m->pgoff, m->filename});
    } else if (const auto* id = std::get_if<perf::AuxOutputHwIdRecord>(&r.body)) {
      if (r.sample_id.cpu) facts.trace_ids[static_cast<int>(*r.sample_id.cpu)] = id->hw_id & 0xff;
    } else if (const auto* aux = std::get_if<perf::AuxRecord>(&r.body)) {
      ++facts.aux_records;
      facts.truncated += (aux->flags & perf::kAuxFlagTruncated) != 0;
      facts.collision += (aux->flags & perf::kAuxFlagCollision) != 0;
    }
    const auto* task = std::get_if<perf::TaskRecord>(&r.body);
    const bool command_exit = task && !task->fork && task->tid == traced_pid;
    if (type == perf::kRecordAux || type == perf::kRecordAuxOutputHwId ||
        type == perf::kRecordItraceStart || type >= 64 || command_exit || !attr.attr.sample_id_all)
      continue;
    facts.carried.insert(facts.carried.end(), sideband.begin() + static_cast<long>(r.offset),
                         sideband.begin() + static_cast<long>(r.offset + r.header.size));
    ++facts.carried_counts[perf::RecordTypeName(type)];
    if (r.sample_id.time)
      facts.first_time = std::min(facts.first_time.value_or(*r.sample_id.time), *r.sample_id.time);
  }
  return facts;
}

}  // namespace ptprof::record::hw
