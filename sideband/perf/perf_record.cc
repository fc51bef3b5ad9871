#include "sideband/perf/perf_record.h"

#include <fmt/format.h>

#include "sideband/perf/byte_cursor.h"
#include "sideband/perf/perf_abi.h"

namespace ptprof::perf {

namespace {

constexpr uint32_t kProtExec = 4;

// Decodes the fixed part of each record kind from `c`, which covers the body minus its trailer.
struct BodyDecoder {
  ByteCursor& c;
  const RecordHeader& header;
  uint64_t record_offset;

  Result<RecordBody> Mmap(bool mmap2) {
    MmapRecord m;
    m.mmap2 = mmap2;
    if (!(c.Read(m.pid) && c.Read(m.tid) && c.Read(m.addr) && c.Read(m.len) && c.Read(m.pgoff)))
      return Short("pid/tid/addr/len/pgoff");
    if (mmap2) {
      if (header.misc & kMiscMmapBuildId) {
        uint8_t size = 0, r1 = 0;
        uint16_t r2 = 0;
        std::span<const uint8_t> id;
        if (!(c.Read(size) && c.Read(r1) && c.Read(r2) && c.Bytes(20, id))) return Short("build_id");
        m.build_id.assign(id.begin(), id.begin() + std::min<size_t>(size, 20));
      } else if (!(c.Read(m.maj) && c.Read(m.min) && c.Read(m.ino) && c.Read(m.ino_generation))) {
        return Short("maj/min/ino");
      }
      if (!(c.Read(m.prot) && c.Read(m.flags))) return Short("prot/flags");
      m.executable = m.prot & kProtExec;
    } else {
      m.executable = !(header.misc & kMiscMmapData);
    }
    m.filename = c.RestAsString();
    return m;
  }

  Result<RecordBody> Comm() {
    CommRecord r;
    if (!(c.Read(r.pid) && c.Read(r.tid))) return Short("pid/tid");
    r.comm = c.RestAsString();
    r.exec = header.misc & kMiscCommExec;
    return r;
  }

  Result<RecordBody> Task(bool fork) {
    TaskRecord r;
    r.fork = fork;
    if (!(c.Read(r.pid) && c.Read(r.ppid) && c.Read(r.tid) && c.Read(r.ptid) && c.Read(r.time)))
      return Short("pid/ppid/tid/ptid/time");
    return r;
  }

  Result<RecordBody> Switch(bool cpu_wide) {
    SwitchRecord r;
    r.cpu_wide = cpu_wide;
    r.out = header.misc & kMiscSwitchOut;
    r.preempt = header.misc & kMiscSwitchOutPreempt;
    if (cpu_wide && !(c.Read(r.next_prev_pid) && c.Read(r.next_prev_tid))) return Short("next_prev_pid/tid");
    return r;
  }

  Result<RecordBody> Aux() {
    AuxRecord r;
    if (!(c.Read(r.aux_offset) && c.Read(r.aux_size) && c.Read(r.flags))) return Short("aux_offset/size/flags");
    return r;
  }

  Result<RecordBody> AuxOutputHwId() {
    AuxOutputHwIdRecord r;
    if (!c.Read(r.hw_id)) return Short("hw_id");
    return r;
  }

  Result<RecordBody> ItraceStart() {
    ItraceStartRecord r;
    if (!(c.Read(r.pid) && c.Read(r.tid))) return Short("pid/tid");
    return r;
  }

  Result<RecordBody> Lost() {
    LostRecord r;
    if (!(c.Read(r.id) && c.Read(r.lost))) return Short("id/lost");
    return r;
  }

  Result<RecordBody> LostSamples() {
    LostSamplesRecord r;
    if (!c.Read(r.lost)) return Short("lost");
    return r;
  }

  Result<RecordBody> AuxtraceInfo() {
    AuxtraceInfoRecord r;
    uint32_t reserved = 0;
    if (!(c.Read(r.type) && c.Read(reserved))) return Short("type");
    r.priv.resize(c.remaining() / 8);
    for (auto& w : r.priv) c.Read(w);
    return r;
  }

  Result<RecordBody> Auxtrace() {
    AuxtraceRecord r;
    uint32_t reserved = 0;
    if (!(c.Read(r.size) && c.Read(r.offset) && c.Read(r.reference) && c.Read(r.idx) && c.Read(r.tid) &&
          c.Read(r.cpu) && c.Read(reserved)))
      return Short("size/offset/reference/idx/tid/cpu");
    r.payload_offset = record_offset + header.size;
    return r;
  }

  Result<RecordBody> TimeConv() {
    TimeConvRecord r;
    if (!(c.Read(r.time_shift) && c.Read(r.time_mult) && c.Read(r.time_zero))) return Short("time_shift/mult/zero");
    if (c.remaining() >= 18) {
      uint8_t zero = 0, short_ = 0;
      r.has_cycles = c.Read(r.time_cycles) && c.Read(r.time_mask) && c.Read(zero) && c.Read(short_);
      r.cap_user_time_zero = zero;
      r.cap_user_time_short = short_;
    }
    return r;
  }

  tl::unexpected<Error> Short(const char* field) {
    return Fail(fmt::format("offset {:#x}: {} record of {} bytes is too short for its {} field(s)", record_offset,
                            RecordTypeName(header.type), header.size, field));
  }
};

}  // namespace

Result<PerfRecord> DecodeRecord(const RecordHeader& header, std::span<const uint8_t> body, uint64_t offset,
                                const AttrSet& attrs) {
  PerfRecord record;
  record.header = header;
  record.offset = offset;
  const uint64_t body_offset = offset + 8;
  if (header.type == kRecordSample) {
    const PerfAttr* attr = attrs.ForSample(body);
    if (!attr)
      return Fail(fmt::format("offset {:#x}: PERF_RECORD_SAMPLE names no event of the file", offset));
    auto sample = ParseSample(body, attr->attr, body_offset);
    if (!sample) return tl::unexpected(sample.error());
    record.sample_id = sample->id;
    record.body = std::move(*sample);
    return record;
  }
  // Kernel records (type < 64) end with a sample_id trailer when sample_id_all is set.
  size_t trailer = 0;
  if (header.type < kRecordHeaderAttr) {
    if (const PerfAttr* attr = attrs.ForNonSample(body)) {
      trailer = SampleIdTrailerSize(attr->attr);
      if (trailer > body.size())
        return Fail(fmt::format("offset {:#x}: {} record of {} bytes is shorter than its sample_id trailer",
                                offset, RecordTypeName(header.type), header.size));
      auto id = ParseSampleIdTrailer(body, attr->attr, body_offset);
      if (!id) return tl::unexpected(id.error());
      record.sample_id = *id;
    }
  }
  ByteCursor c(body.first(body.size() - trailer), body_offset);
  BodyDecoder d{c, header, offset};
  Result<RecordBody> decoded = OtherRecord{};
  switch (header.type) {
    case kRecordMmap: decoded = d.Mmap(false); break;
    case kRecordMmap2: decoded = d.Mmap(true); break;
    case kRecordComm: decoded = d.Comm(); break;
    case kRecordFork: decoded = d.Task(true); break;
    case kRecordExit: decoded = d.Task(false); break;
    case kRecordSwitch: decoded = d.Switch(false); break;
    case kRecordSwitchCpuWide: decoded = d.Switch(true); break;
    case kRecordAux: decoded = d.Aux(); break;
    case kRecordItraceStart: decoded = d.ItraceStart(); break;
    case kRecordAuxOutputHwId: decoded = d.AuxOutputHwId(); break;
    case kRecordLost: decoded = d.Lost(); break;
    case kRecordLostSamples: decoded = d.LostSamples(); break;
    case kRecordAuxtraceInfo: decoded = d.AuxtraceInfo(); break;
    case kRecordAuxtrace: decoded = d.Auxtrace(); break;
    case kRecordTimeConv: decoded = d.TimeConv(); break;
    case kRecordFinishedRound: decoded = FinishedRoundRecord{}; break;
    default: break;
  }
  if (!decoded) return tl::unexpected(decoded.error());
  record.body = std::move(*decoded);
  return record;
}

Result<std::vector<PerfRecord>> ParsePerfEventBuffer(std::span<const uint8_t> bytes, const PerfEventAttr& attr,
                                                     const std::string& name) {
  AttrSet attrs;
  attrs.Add(PerfAttr{attr, {}, ""});
  std::vector<PerfRecord> records;
  ByteCursor c(bytes);
  while (!c.empty()) {
    const uint64_t offset = c.offset();
    RecordHeader h;
    if (!(c.Read(h.type) && c.Read(h.misc) && c.Read(h.size)))
      return Fail(fmt::format("{}: offset {:#x}: {} trailing bytes are not a whole record header", name, offset,
                              bytes.size() - offset));
    if (h.size < 8)
      return Fail(fmt::format("{}: offset {:#x}: record size {} is smaller than its header", name, offset, h.size));
    std::span<const uint8_t> body;
    if (!c.Bytes(h.size - 8u, body))
      return Fail(fmt::format("{}: offset {:#x}: {} record of {} bytes runs past the end ({} bytes)", name, offset,
                              RecordTypeName(h.type), h.size, bytes.size()));
    auto record = DecodeRecord(h, body, offset, attrs);
    if (!record) return Fail(name + ": " + record.error().message);
    if (h.type == kRecordAuxtrace) {  // its payload follows the record
      const auto& aux = std::get<AuxtraceRecord>(record->body);
      if (!c.Skip(aux.size))
        return Fail(fmt::format("{}: offset {:#x}: AUXTRACE payload of {} bytes runs past the end", name, offset,
                                aux.size));
    }
    records.push_back(std::move(*record));
  }
  return records;
}

}  // namespace ptprof::perf
