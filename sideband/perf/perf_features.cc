#include "sideband/perf/perf_features.h"

#include <fmt/format.h>

#include "sideband/perf/byte_cursor.h"
#include "sideband/perf/perf_abi.h"

namespace ptprof::perf {

namespace {

// perf's length-prefixed, NUL-padded string.
bool ReadHeaderString(ByteCursor& c, std::string& out) {
  uint32_t len = 0;
  return c.Read(len) && c.String(len, out);
}

bool ReadStringList(ByteCursor& c, std::vector<std::string>& out) {
  uint32_t nr = 0;
  if (!c.Read(nr) || nr > c.remaining() / 4) return false;
  for (uint32_t i = 0; i < nr; ++i) {
    std::string s;
    if (!ReadHeaderString(c, s)) return false;
    out.push_back(std::move(s));
  }
  return true;
}

bool ReadEventDesc(ByteCursor& c, std::vector<EventDesc>& out) {
  uint32_t nr = 0, attr_size = 0;
  if (!c.Read(nr) || !c.Read(attr_size) || attr_size < 64) return false;
  for (uint32_t i = 0; i < nr; ++i) {
    EventDesc d;
    std::span<const uint8_t> attr_bytes;
    uint32_t nr_ids = 0;
    if (!c.Bytes(attr_size, attr_bytes)) return false;
    auto attr = ParseEventAttr(attr_bytes, c.offset());
    if (!attr) return false;
    d.attr = *attr;
    if (!c.Read(nr_ids) || !ReadHeaderString(c, d.name) || nr_ids > c.remaining() / 8) return false;
    d.ids.resize(nr_ids);
    for (auto& id : d.ids) c.Read(id);
    out.push_back(std::move(d));
  }
  return true;
}

bool ReadPmuMappings(ByteCursor& c, std::map<uint32_t, std::string>& out) {
  uint32_t nr = 0;
  if (!c.Read(nr) || nr > c.remaining() / 8) return false;
  for (uint32_t i = 0; i < nr; ++i) {
    uint32_t type = 0;
    std::string name;
    if (!c.Read(type) || !ReadHeaderString(c, name)) return false;
    out[type] = name;
  }
  return true;
}

bool ReadAuxtraceIndexBlocks(ByteCursor& c, std::vector<AuxtraceIndexEntry>& out);

// perf writes blocks of {u64 nr; nr x {file_offset, size}}; simpleperf writes the entries bare.
bool ReadAuxtraceIndex(ByteCursor c, std::vector<AuxtraceIndexEntry>& out) {
  ByteCursor bare = c;
  if (ReadAuxtraceIndexBlocks(c, out)) return true;
  out.clear();
  if (bare.remaining() % 16 != 0) return false;
  while (!bare.empty()) {
    AuxtraceIndexEntry e;
    bare.Read(e.file_offset);
    bare.Read(e.size);
    out.push_back(e);
  }
  return true;
}

bool ReadAuxtraceIndexBlocks(ByteCursor& c, std::vector<AuxtraceIndexEntry>& out) {
  while (!c.empty()) {
    uint64_t nr = 0;
    if (!c.Read(nr) || nr > c.remaining() / 16) return false;
    for (uint64_t i = 0; i < nr; ++i) {
      AuxtraceIndexEntry e;
      c.Read(e.file_offset);
      c.Read(e.size);
      out.push_back(e);
    }
  }
  return true;
}

bool ReadOptionalU64(ByteCursor& c, std::optional<uint64_t>& out) {
  uint64_t v = 0;
  if (!c.Read(v)) return false;
  out = v;
  return true;
}

}  // namespace

Status ParseBuildIds(std::span<const uint8_t> bytes, uint64_t offset, std::vector<BuildIdEntry>& out) {
  ByteCursor c(bytes, offset);
  while (c.remaining() >= 8) {
    const uint64_t at = c.offset();
    uint32_t type = 0;
    uint16_t misc = 0, size = 0;
    c.Read(type), c.Read(misc), c.Read(size);
    std::span<const uint8_t> body;
    if (size < 8 + 4 + 24 || !c.Bytes(size - 8u, body))
      return Fail(fmt::format("offset {:#x}: build_id entry of {} bytes does not fit", at, size));
    ByteCursor b(body, at + 8);
    BuildIdEntry e;
    std::span<const uint8_t> id;
    b.Read(e.pid);
    b.Bytes(24, id);
    size_t id_size = (misc & kMiscBuildIdSize) ? std::min<size_t>(id[20], 20) : 20;
    for (size_t i = 0; i < id_size; ++i) e.build_id += fmt::format("{:02x}", id[i]);
    e.misc = misc;
    e.filename = b.RestAsString();
    out.push_back(std::move(e));
  }
  return {};
}

Status ParseFeatureSection(int id, std::span<const uint8_t> bytes, uint64_t offset, PerfFeatures& f) {
  f.present.push_back(id);
  ByteCursor c(bytes, offset);
  bool ok = true;
  switch (id) {
    case kFeatHostname: ok = ReadHeaderString(c, f.hostname); break;
    case kFeatOsRelease: ok = ReadHeaderString(c, f.osrelease); break;
    case kFeatVersion: ok = ReadHeaderString(c, f.version); break;
    case kFeatArch: ok = ReadHeaderString(c, f.arch); break;
    case kFeatCpuDesc: ok = ReadHeaderString(c, f.cpudesc); break;
    case kFeatCpuId: ok = ReadHeaderString(c, f.cpuid); break;
    case kFeatNrCpus: {
      uint32_t available = 0, online = 0;
      ok = c.Read(available) && c.Read(online);
      if (ok) f.nr_cpus_available = available, f.nr_cpus_online = online;
      break;
    }
    case kFeatTotalMem: ok = ReadOptionalU64(c, f.total_mem_kb); break;
    case kFeatCmdline: ok = ReadStringList(c, f.cmdline); break;
    case kFeatEventDesc: ok = ReadEventDesc(c, f.event_desc); break;
    case kFeatPmuMappings: ok = ReadPmuMappings(c, f.pmu_mappings); break;
    case kFeatAuxtrace: ok = ReadAuxtraceIndex(c, f.auxtrace_index); break;
    case kFeatClockId: ok = ReadOptionalU64(c, f.clockid_res_ns); break;
    case kFeatSampleTime: ok = ReadOptionalU64(c, f.sample_time_first) && ReadOptionalU64(c, f.sample_time_last); break;
    case kFeatClockData: {
      ClockData d;
      ok = c.Read(d.version) && c.Read(d.clockid) && c.Read(d.wall_clock_ns) && c.Read(d.clockid_time_ns);
      if (ok) f.clock_data = d;
      break;
    }
    case kFeatBuildId: return ParseBuildIds(bytes, offset, f.build_ids);
    default: break;  // listed as present, not decoded
  }
  if (!ok)
    return Fail(fmt::format("offset {:#x}: feature section {} ({} bytes) is malformed at offset {:#x}", offset,
                            FeatureName(id), bytes.size(), c.offset()));
  return {};
}

}  // namespace ptprof::perf
