#include "sideband/perf/perf_sample.h"

#include <bit>

#include <fmt/format.h>

#include "sideband/perf/byte_cursor.h"
#include "sideband/perf/perf_abi.h"

namespace ptprof::perf {

namespace {

// Reads `count` u64 words after checking that they are there.
bool ReadWords(ByteCursor& c, uint64_t count, std::vector<uint64_t>& out) {
  if (count > c.remaining() / 8) return false;
  out.resize(static_cast<size_t>(count));
  for (auto& w : out) c.Read(w);
  return true;
}

bool ReadOptional(ByteCursor& c, std::optional<uint64_t>& out) {
  uint64_t v = 0;
  if (!c.Read(v)) return false;
  out = v;
  return true;
}

bool ReadPidTid(ByteCursor& c, SampleId& id) {
  uint32_t pid = 0, tid = 0;
  if (!c.Read(pid) || !c.Read(tid)) return false;
  id.pid = pid;
  id.tid = tid;
  return true;
}

bool ReadCpu(ByteCursor& c, SampleId& id) {
  uint32_t cpu = 0, reserved = 0;
  if (!c.Read(cpu) || !c.Read(reserved)) return false;
  id.cpu = cpu;
  return true;
}

bool ReadReadFormat(ByteCursor& c, uint64_t read_format, std::vector<uint64_t>& values) {
  uint64_t word = 0;
  auto skip = [&](uint64_t bit) { return !(read_format & bit) || c.Read(word); };
  if (read_format & kReadGroup) {
    uint64_t nr = 0;
    if (!c.Read(nr) || !skip(kReadTotalTimeEnabled) || !skip(kReadTotalTimeRunning)) return false;
    uint64_t per_entry = 1 + ((read_format & kReadId) ? 1 : 0) + ((read_format & kReadLost) ? 1 : 0);
    if (nr > c.remaining() / 8 / per_entry) return false;
    for (uint64_t i = 0; i < nr; ++i) {
      uint64_t value = 0;
      c.Read(value);
      values.push_back(value);
      if (!skip(kReadId) || !skip(kReadLost)) return false;
    }
    return true;
  }
  uint64_t value = 0;
  if (!c.Read(value)) return false;
  values.push_back(value);
  return skip(kReadTotalTimeEnabled) && skip(kReadTotalTimeRunning) && skip(kReadId) &&
         skip(kReadLost);
}

bool ReadRegs(ByteCursor& c, uint64_t mask, uint64_t& abi, std::vector<uint64_t>& regs) {
  if (!c.Read(abi)) return false;
  if (abi == 0) return true;
  return ReadWords(c, static_cast<uint64_t>(std::popcount(mask)), regs);
}

}  // namespace

Result<PerfSample> ParseSample(std::span<const uint8_t> body, const PerfEventAttr& attr, uint64_t offset) {
  const uint64_t t = attr.sample_type;
  PerfSample s;
  ByteCursor c(body, offset);
  const char* field = "";
  auto need = [&](bool ok, const char* name) {
    if (!ok) field = name;
    return ok;
  };
  bool ok =
      (!(t & kSampleIdentifier) || need(ReadOptional(c, s.id.identifier), "identifier")) &&
      (!(t & kSampleIp) || need(ReadOptional(c, s.ip), "ip")) &&
      (!(t & kSampleTid) || need(ReadPidTid(c, s.id), "pid/tid")) &&
      (!(t & kSampleTime) || need(ReadOptional(c, s.id.time), "time")) &&
      (!(t & kSampleAddr) || need(ReadOptional(c, s.addr), "addr")) &&
      (!(t & kSampleId) || need(ReadOptional(c, s.id.id), "id")) &&
      (!(t & kSampleStreamId) || need(ReadOptional(c, s.id.stream_id), "stream_id")) &&
      (!(t & kSampleCpu) || need(ReadCpu(c, s.id), "cpu")) &&
      (!(t & kSamplePeriod) || need(ReadOptional(c, s.period), "period")) &&
      (!(t & kSampleRead) || need(ReadReadFormat(c, attr.read_format, s.read_values), "read"));
  if (ok && !s.id.id) s.id.id = s.id.identifier;
  if (ok && (t & kSampleCallchain)) {
    uint64_t nr = 0;
    ok = need(c.Read(nr) && ReadWords(c, nr, s.callchain), "callchain");
  }
  if (ok && (t & kSampleRaw)) ok = need(c.Read(s.raw_size) && c.Skip(s.raw_size), "raw");
  if (ok && (t & kSampleBranchStack)) {
    uint64_t nr = 0;
    ok = need(c.Read(nr), "branch_stack.nr");
    if (ok && (attr.branch_sample_type & kBranchHwIndex))
      ok = need(ReadOptional(c, s.branch_hw_index), "branch_stack.hw_idx");
    if (ok) ok = need(nr <= c.remaining() / 24, "branch_stack");
    if (ok) {
      s.branch_stack.resize(static_cast<size_t>(nr));
      for (auto& b : s.branch_stack) c.Read(b.from), c.Read(b.to), c.Read(b.flags);
    }
  }
  if (ok && (t & kSampleRegsUser))
    ok = need(ReadRegs(c, attr.sample_regs_user, s.regs_user_abi, s.regs_user), "regs_user");
  if (ok && (t & kSampleStackUser)) {
    uint64_t dyn_size = 0;
    ok = need(c.Read(s.stack_user_size) && c.Skip(s.stack_user_size) &&
                  (s.stack_user_size == 0 || c.Read(dyn_size)),
              "stack_user");
  }
  if (ok && (t & (kSampleWeight | kSampleWeightStruct))) ok = need(ReadOptional(c, s.weight), "weight");
  if (ok && (t & kSampleDataSrc)) ok = need(ReadOptional(c, s.data_src), "data_src");
  if (ok && (t & kSampleTransaction)) ok = need(ReadOptional(c, s.transaction), "transaction");
  if (ok && (t & kSampleRegsIntr))
    ok = need(ReadRegs(c, attr.sample_regs_intr, s.regs_intr_abi, s.regs_intr), "regs_intr");
  if (ok && (t & kSamplePhysAddr)) ok = need(ReadOptional(c, s.phys_addr), "phys_addr");
  if (ok && (t & kSampleCgroup)) ok = need(ReadOptional(c, s.cgroup), "cgroup");
  if (ok && (t & kSampleDataPageSize)) ok = need(ReadOptional(c, s.data_page_size), "data_page_size");
  if (ok && (t & kSampleCodePageSize)) ok = need(ReadOptional(c, s.code_page_size), "code_page_size");
  if (ok && (t & kSampleAux)) ok = need(c.Read(s.aux_size) && c.Skip(s.aux_size), "aux");
  if (!ok)
    return Fail(fmt::format("offset {:#x}: sample field {} runs past the end of the {}-byte record "
                            "(sample_type {:#x})", c.offset(), field, body.size() + 8, t));
  return s;
}

size_t SampleIdTrailerSize(const PerfEventAttr& attr) {
  if (!attr.sample_id_all()) return 0;
  const uint64_t t = attr.sample_type;
  size_t words = 0;
  for (uint64_t bit : {uint64_t{kSampleTid}, uint64_t{kSampleTime}, uint64_t{kSampleId},
                       uint64_t{kSampleStreamId}, uint64_t{kSampleCpu}, uint64_t{kSampleIdentifier}})
    if (t & bit) ++words;
  return words * 8;
}

Result<SampleId> ParseSampleIdTrailer(std::span<const uint8_t> body, const PerfEventAttr& attr,
                                      uint64_t offset) {
  SampleId id;
  size_t size = SampleIdTrailerSize(attr);
  if (size == 0) return id;
  if (size > body.size())
    return Fail(fmt::format("offset {:#x}: record body of {} bytes is shorter than its {}-byte "
                            "sample_id trailer", offset, body.size(), size));
  ByteCursor c(body.subspan(body.size() - size), offset + body.size() - size);
  const uint64_t t = attr.sample_type;
  // The size was checked above, so none of these reads can fail.
  if (t & kSampleTid) ReadPidTid(c, id);
  if (t & kSampleTime) ReadOptional(c, id.time);
  if (t & kSampleId) ReadOptional(c, id.id);
  if (t & kSampleStreamId) ReadOptional(c, id.stream_id);
  if (t & kSampleCpu) ReadCpu(c, id);
  if (t & kSampleIdentifier) {
    ReadOptional(c, id.identifier);
    if (!id.id) id.id = id.identifier;
  }
  return id;
}

}  // namespace ptprof::perf
