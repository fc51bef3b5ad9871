#include "sideband/perf/perf_data.h"

#include <algorithm>
#include <cstring>
#include <set>

#include <fmt/format.h>

#include "sideband/file_bytes.h"
#include "sideband/perf/perf_abi.h"
#include "sideband/perf/perf_data_tokenizer.h"
#include "sideband/perf/perf_decompress.h"

namespace ptprof::perf {

namespace {

constexpr size_t kMaxProblems = 8;
constexpr uint32_t kNoCpu = 0xffffffffu;

bool IsSideband(uint32_t type) {
  switch (type) {
    case kRecordMmap: case kRecordMmap2: case kRecordComm: case kRecordFork: case kRecordExit:
    case kRecordSwitch: case kRecordSwitchCpuWide: case kRecordItraceStart:
      return true;
    default:
      return false;
  }
}

// Consumes tokens one by one and fills a PerfData.
class PerfDataBuilder {
 public:
  PerfDataBuilder(PerfData& data, const PerfDataOptions& options) : d_(data), options_(options) {}

  Status Consume(const PerfToken& token) {
    if (const auto* attr = std::get_if<AttrToken>(&token)) {
      attrs_.Add(attr->attr);
      return {};
    }
    if (const auto* feature = std::get_if<FeatureToken>(&token)) {
      Feature(*feature);
      return {};
    }
    return Record(std::get<RecordToken>(token));
  }

  void Finish() {
    if (decompressor_.pending() != 0) {
      ++d_.bad_records;
      Problem(fmt::format("{}: {} bytes of an incomplete record are left at the end of the compressed records",
                          d_.name, decompressor_.pending()));
    }
    d_.attrs = attrs_.attrs();
    for (auto& attr : d_.attrs)  // names from event_desc, matched by id
      for (const auto& desc : d_.features.event_desc)
        for (uint64_t id : desc.ids)
          if (std::find(attr.ids.begin(), attr.ids.end(), id) != attr.ids.end()) attr.name = desc.name;
    std::stable_sort(d_.sideband.begin(), d_.sideband.end(), [](const PerfRecord& a, const PerfRecord& b) {
      return a.sample_id.time.value_or(0) < b.sample_id.time.value_or(0);
    });
    bool snapshot = (d_.intel_pt && d_.intel_pt->snapshot_mode) || (d_.cs_etm && d_.cs_etm->snapshot);
    for (auto& s : d_.aux_streams) s.snapshot = snapshot;
    std::sort(d_.aux_streams.begin(), d_.aux_streams.end(),
              [](const AuxStream& a, const AuxStream& b) { return a.idx < b.idx; });
    d_.cpus.assign(cpus_.begin(), cpus_.end());
  }

 private:
  void Problem(const std::string& message) {
    if (d_.problems.size() < kMaxProblems) d_.problems.push_back(message);
  }

  void Feature(const FeatureToken& f) {
    auto status = ParseFeatureSection(f.id, f.bytes, f.offset, d_.features);
    if (!status) Problem(d_.name + ": " + status.error().message);
  }

  void NoteTime(const SampleId& id) {
    if (id.time && *id.time != 0) {  // 0: a record perf synthesized at startup, not a time
      if (!d_.first_time || *id.time < *d_.first_time) d_.first_time = *id.time;
      if (!d_.last_time || *id.time > *d_.last_time) d_.last_time = *id.time;
    }
    if (id.cpu && *id.cpu != kNoCpu) cpus_.insert(*id.cpu);
  }

  Status Record(const RecordToken& t) {
    ++d_.records;
    ++d_.record_counts[t.header.type];
    if (!IsKnownRecordType(t.header.type)) {
      ++d_.unknown_records;
      return {};
    }
    switch (t.header.type) {  // records about the file itself (pipe mode mostly)
      case kRecordHeaderAttr: {
        if (!d_.pipe_mode) return {};  // file mode has its attr section (simpleperf repeats it)
        auto attr = ParseHeaderAttrRecord(t.body, t.offset);
        if (!attr) return Bad(attr.error().message);
        attrs_.Add(std::move(*attr));
        return {};
      }
      case kRecordHeaderFeature: {
        auto feature = ParseHeaderFeatureRecord(t.body, t.offset);
        if (!feature) return Bad(feature.error().message);
        Feature(*feature);
        return {};
      }
      case kRecordCompressed:
      case kRecordCompressed2:
        return Compressed(t);
      case kRecordHeaderBuildId: {
        // The entry is the record itself, header included (rebuilt: inner records of compressed
        // data have no header in front of their body).
        std::vector<uint8_t> whole(8);
        std::memcpy(whole.data(), &t.header.type, 4);
        std::memcpy(whole.data() + 4, &t.header.misc, 2);
        std::memcpy(whole.data() + 6, &t.header.size, 2);
        whole.insert(whole.end(), t.body.begin(), t.body.end());
        auto status = ParseBuildIds(whole, t.offset, d_.features.build_ids);
        if (!status) return Bad(status.error().message);
        return {};
      }
      default: break;
    }
    auto record = DecodeRecord(t.header, t.body, t.offset, attrs_);
    if (!record) return Bad(record.error().message);
    NoteTime(record->sample_id);
    if (auto* sample = std::get_if<PerfSample>(&record->body)) {
      ++d_.sample_count;
      if (options_.keep_samples) {
        d_.samples.push_back(std::move(*sample));
        d_.sample_offsets.push_back(t.offset);
      }
    } else if (const auto* aux = std::get_if<AuxRecord>(&record->body)) {
      d_.aux_notices.push_back({t.offset, record->sample_id.time, record->sample_id.cpu, record->sample_id.tid, *aux});
      d_.aux_truncated += (aux->flags & kAuxFlagTruncated) != 0;
      d_.aux_partial += (aux->flags & kAuxFlagPartial) != 0;
      d_.aux_collision += (aux->flags & kAuxFlagCollision) != 0;
      d_.aux_overwrite += (aux->flags & kAuxFlagOverwrite) != 0;
      d_.aux_pmu_flags |= aux->flags & kAuxFlagPmuFormatMask;
    } else if (const auto* at = std::get_if<AuxtraceRecord>(&record->body)) {
      AddAuxBuffer(*at, t.offset);
    } else if (const auto* info = std::get_if<AuxtraceInfoRecord>(&record->body)) {
      AuxtraceInfo(*info, t.offset);
    } else if (const auto* tc = std::get_if<TimeConvRecord>(&record->body)) {
      d_.time_conv = *tc;
    } else if (const auto* lost = std::get_if<LostRecord>(&record->body)) {
      d_.lost_events += lost->lost;
    } else if (const auto* lost_samples = std::get_if<LostSamplesRecord>(&record->body)) {
      d_.lost_samples += lost_samples->lost;
    }
    if (IsSideband(t.header.type)) d_.sideband.push_back(std::move(*record));
    return {};
  }

  // perf record -z: the records inside are counted and decoded like the others. Their offsets in
  // errors are the compressed record's.
  Status Compressed(const RecordToken& t) {
    std::span<const uint8_t> payload = t.body;
    if (t.header.type == kRecordCompressed2) {
      uint64_t size = 0;
      if (payload.size() < 8) return Bad(fmt::format("offset {:#x}: COMPRESSED2 record without its data size", t.offset));
      std::memcpy(&size, payload.data(), 8);
      if (size > payload.size() - 8)
        return Bad(fmt::format("offset {:#x}: COMPRESSED2 data size {} exceeds the record", t.offset, size));
      payload = payload.subspan(8, size);
    }
    auto inner = decompressor_.Add(payload, t.offset);
    if (!inner) return Bad(inner.error().message);
    for (const auto& r : *inner) {
      if (r.header.type == kRecordCompressed || r.header.type == kRecordCompressed2 ||
          r.header.type == kRecordAuxtrace || r.header.type == kRecordHeaderTracingData) {
        Bad(fmt::format("offset {:#x}: {} inside compressed records is not allowed", t.offset,
                        RecordTypeName(r.header.type)));
        continue;
      }
      RecordToken token;
      token.header = r.header;
      token.offset = t.offset;
      token.body = r.body;
      if (auto status = Record(token); !status) return status;
    }
    return {};
  }

  Status Bad(const std::string& message) {
    ++d_.bad_records;
    Problem(d_.name + ": " + message);
    return {};
  }

  void AddAuxBuffer(const AuxtraceRecord& r, uint64_t record_offset) {
    AuxStream* stream = nullptr;
    for (auto& s : d_.aux_streams)
      if (s.idx == r.idx) stream = &s;
    if (!stream) {
      AuxStream s;
      s.idx = r.idx;
      if (r.cpu != kNoCpu) s.cpu = r.cpu;
      if (r.tid != kNoCpu) s.tid = r.tid;
      s.name = s.cpu ? fmt::format("cpu{}", *s.cpu) : s.tid ? fmt::format("tid{}", *s.tid) : fmt::format("idx{}", r.idx);
      for (const auto& other : d_.aux_streams)
        if (other.name == s.name) s.name += fmt::format(".idx{}", r.idx);
      d_.aux_streams.push_back(std::move(s));
      stream = &d_.aux_streams.back();
    }
    if (r.cpu != kNoCpu) cpus_.insert(r.cpu);
    stream->buffers.push_back({record_offset, r.payload_offset, r.size, r.offset, r.reference});
    stream->bytes += r.size;
  }

  void AuxtraceInfo(const AuxtraceInfoRecord& info, uint64_t offset) {
    d_.auxtrace_info.push_back(info);
    if (info.type == kAuxtraceIntelPt) {
      auto pt = DecodeIntelPtInfo(info);
      if (pt) d_.intel_pt = *pt;
      else Problem(fmt::format("{}: offset {:#x}: {}", d_.name, offset, pt.error().message));
    } else if (info.type == kAuxtraceCsEtm) {
      auto etm = DecodeCsEtmInfo(info);
      if (etm) d_.cs_etm = *etm;
      else Problem(fmt::format("{}: offset {:#x}: {}", d_.name, offset, etm.error().message));
    }
  }

  PerfData& d_;
  const PerfDataOptions& options_;
  AttrSet attrs_;
  std::set<uint32_t> cpus_;
  RecordDecompressor decompressor_;
};

}  // namespace

std::optional<PerfClock> PerfData::clock() const {
  PerfClock c;
  if (time_conv) {
    c = {static_cast<uint16_t>(time_conv->time_shift), static_cast<uint32_t>(time_conv->time_mult), time_conv->time_zero};
  } else if (intel_pt) {
    c = {static_cast<uint16_t>(intel_pt->time_shift), static_cast<uint32_t>(intel_pt->time_mult), intel_pt->time_zero};
  }
  if (!c.usable()) return std::nullopt;
  return c;
}

std::string PerfData::PmuName(const PerfEventAttr& attr) const {
  auto it = features.pmu_mappings.find(attr.type);
  if (it != features.pmu_mappings.end()) return it->second;
  std::string generic = GenericPmuName(attr.type);
  if (!generic.empty()) return generic;
  if (intel_pt && attr.type == intel_pt->pmu_type) return "intel_pt";
  if (cs_etm && attr.type == cs_etm->pmu_type) return "cs_etm";
  return "pmu" + std::to_string(attr.type);
}

const PerfAttr* PerfData::AuxAttr() const {
  for (const auto& a : attrs) {
    std::string pmu = PmuName(a.attr);
    if (pmu == "intel_pt" || pmu == "cs_etm" || pmu == "intel_bts" || pmu == "arm_spe" ||
        pmu.rfind("arm_spe", 0) == 0)
      return &a;
  }
  return nullptr;
}

SharedBytes PerfData::StreamBytes(const AuxStream& stream) const {
  if (stream.buffers.size() == 1)
    return bytes.Slice(stream.buffers[0].data_offset, stream.buffers[0].size);
  std::vector<uint8_t> out;
  out.reserve(stream.bytes);
  for (const auto& b : stream.buffers)  // the tokenizer checked every payload lies inside `bytes`
    out.insert(out.end(), bytes.begin() + static_cast<std::ptrdiff_t>(b.data_offset),
               bytes.begin() + static_cast<std::ptrdiff_t>(b.data_offset + b.size));
  return SharedBytes(std::move(out));
}

const AuxStream* PerfData::FindStream(const std::string& stream_name) const {
  for (const auto& s : aux_streams)
    if (s.name == stream_name) return &s;
  return nullptr;
}

const PerfAttr* PerfData::AttrOf(const SampleId& id) const {
  if (!id.id) return attrs.size() == 1 ? &attrs[0] : nullptr;
  for (const auto& a : attrs)
    if (std::find(a.ids.begin(), a.ids.end(), *id.id) != a.ids.end()) return &a;
  return nullptr;
}

Result<PerfData> ParsePerfData(SharedBytes bytes, const std::string& name, const PerfDataOptions& options) {
  PerfData d;
  d.name = name;
  d.bytes = std::move(bytes);
  d.file_size = d.bytes.size();
  PerfDataTokenizer tokenizer(d.bytes, name);
  PerfDataBuilder builder(d, options);
  for (;;) {
    auto token = tokenizer.Next();
    if (!token) return tl::unexpected(token.error());
    if (!*token) break;
    if (tokenizer.state() != PerfDataTokenizer::State::kFileHeader) {
      d.pipe_mode = tokenizer.pipe_mode();
      d.data_offset = tokenizer.data_offset();
      d.data_size = tokenizer.data_size();
    }
    auto status = builder.Consume(**token);
    if (!status) return tl::unexpected(status.error());
  }
  if (tokenizer.data_size_was_zero())
    d.problems.insert(d.problems.begin(), name + ": offset 0x30: the header gives data size 0 (perf record was not "
                                                 "terminated properly); records were read to the end of the file");
  builder.Finish();
  return d;
}

Result<PerfData> ReadPerfData(const std::string& path, const PerfDataOptions& options) {
  auto bytes = SharedBytes::MapFile(path);
  if (!bytes) return tl::unexpected(bytes.error());
  return ParsePerfData(std::move(*bytes), path, options);
}

}  // namespace ptprof::perf
