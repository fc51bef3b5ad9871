#pragma once
// Test helper: libipt-style sideband files (bare perf_event records with a sample_id trailer of
// TID and/or TIME) for the pevent unit tests.
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "decoders/pt/pevent_source.h"
#include "sideband/perf/perf_abi.h"
#include "sideband/perf/perf_test_bytes.h"

namespace ptprof::pt::testing {

using perf::testing::Bytes;

// Trailer fields: pid/tid when `pid` is set (sample type TID), then the time (sample type TIME).
struct Trailer {
  std::optional<uint32_t> pid;
  uint64_t time = 0;
};

inline std::vector<uint8_t> WithTrailer(Bytes body, const Trailer& t) {
  if (t.pid) body.U32(*t.pid).U32(*t.pid);
  body.U64(t.time);
  return body.data;
}

inline std::vector<uint8_t> Mmap(uint32_t pid, uint64_t addr, uint64_t len, uint64_t pgoff, const std::string& file,
                                 const Trailer& t, uint16_t misc = 2 /* user */) {
  Bytes b;
  b.U32(pid).U32(pid).U64(addr).U64(len).U64(pgoff).Str(file, (file.size() + 8) / 8 * 8);
  return perf::testing::Record(perf::kRecordMmap, misc, WithTrailer(b, t));
}

inline std::vector<uint8_t> ItraceStart(uint32_t pid, const Trailer& t) {
  Bytes b;
  b.U32(pid).U32(pid);
  return perf::testing::Record(perf::kRecordItraceStart, 0, WithTrailer(b, t));
}

inline std::vector<uint8_t> CommExec(uint32_t pid, const std::string& comm, const Trailer& t) {
  Bytes b;
  b.U32(pid).U32(pid).Str(comm, (comm.size() + 8) / 8 * 8);
  return perf::testing::Record(perf::kRecordComm, perf::kMiscCommExec, WithTrailer(b, t));
}

inline std::vector<uint8_t> Switch(bool out, const Trailer& t) {
  return perf::testing::Record(perf::kRecordSwitch, out ? perf::kMiscSwitchOut : 0, WithTrailer(Bytes{}, t));
}

inline std::vector<uint8_t> Lost(uint64_t id, uint64_t lost, const Trailer& t) {
  Bytes b;
  b.U64(id).U64(lost);
  return perf::testing::Record(perf::kRecordLost, 0, WithTrailer(b, t));
}

inline std::vector<uint8_t> Aux(uint64_t offset, uint64_t size, uint64_t flags, const Trailer& t) {
  Bytes b;
  b.U64(offset).U64(size).U64(flags);
  return perf::testing::Record(perf::kRecordAux, 0, WithTrailer(b, t));
}

inline std::vector<uint8_t> Concat(std::initializer_list<std::vector<uint8_t>> records) {
  std::vector<uint8_t> out;
  for (const auto& r : records) out.insert(out.end(), r.begin(), r.end());
  return out;
}

// A source over `bytes` named `name`, read with `sample_type` (and 1:1 time conversion).
inline PeventSource SourceOf(const std::vector<uint8_t>& bytes, uint64_t sample_type, const std::string& name = "sb",
                             bool primary = true) {
  PeventFile file;
  file.range.file = name;
  file.primary = primary;
  file.config.sample_type = sample_type;
  auto source = PeventSource::FromBytes(bytes, name, file);
  if (!source) throw std::runtime_error(source.error().message);
  return std::move(*source);
}

}  // namespace ptprof::pt::testing
