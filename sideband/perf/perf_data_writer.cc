#include "sideband/perf/perf_data_writer.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include "sideband/perf/perf_abi.h"

namespace ptprof::perf {

namespace {

constexpr uint32_t kAttrSize = 128;      // PERF_ATTR_SIZE_VER7, what perf 6.1 knows
constexpr uint64_t kEventId = 1;         // the intel_pt event's sample id
constexpr uint64_t kAttrSampleIdAll = 1u << 18;
constexpr uint16_t kMiscUser = 2;        // PERF_RECORD_MISC_USER
constexpr uint32_t kProtReadExec = 0x5;  // PROT_READ | PROT_EXEC
constexpr uint32_t kMapPrivate = 0x2;
constexpr size_t kNameAlign = 64;        // perf pads feature strings and build-id names to this
constexpr size_t kAuxtraceHeaderSize = 48;
constexpr size_t kMaxRecordSize = 0xffff;

// Little-endian appender.
class Out {
 public:
  template <class T>
  Out& Put(T v) {
    uint8_t b[sizeof(T)];
    std::memcpy(b, &v, sizeof(T));
    bytes.insert(bytes.end(), b, b + sizeof(T));
    return *this;
  }
  Out& U16(uint16_t v) { return Put(v); }
  Out& U32(uint32_t v) { return Put(v); }
  Out& U64(uint64_t v) { return Put(v); }
  Out& Zeros(size_t n) {
    bytes.insert(bytes.end(), n, 0);
    return *this;
  }
  Out& Append(std::span<const uint8_t> more) {
    bytes.insert(bytes.end(), more.begin(), more.end());
    return *this;
  }
  // `s` with its NUL, padded with NULs to a multiple of `align`.
  Out& PaddedString(const std::string& s, size_t align) {
    const size_t len = (s.size() + 1 + align - 1) / align * align;
    bytes.insert(bytes.end(), s.begin(), s.end());
    return Zeros(len - s.size());
  }
  size_t size() const { return bytes.size(); }
  std::vector<uint8_t> bytes;
};

// A feature-section string as perf writes it: u32 padded length, then the padded text.
void FeatureString(Out& out, const std::string& s) {
  const size_t len = (s.size() + 1 + kNameAlign - 1) / kNameAlign * kNameAlign;
  out.U32(static_cast<uint32_t>(len)).PaddedString(s, kNameAlign);
}

bool IsEtm(const PerfDataDescription& d) { return d.auxtrace_type == kAuxtraceCsEtm; }

uint64_t SampleType(const PerfDataDescription& d) {
  return kSampleIp | kSampleTid | (d.sample_time ? kSampleTime : 0) | kSampleCpu | kSampleIdentifier;
}

uint32_t PmuType(const PerfDataDescription& d) {
  return IsEtm(d) ? d.etm_info.pmu_type : static_cast<uint32_t>(d.pt_info.pmu_type);
}

std::string PmuName(const PerfDataDescription& d) { return IsEtm(d) ? "cs_etm" : "intel_pt"; }

std::vector<uint8_t> EncodeAttr(const PerfDataDescription& d) {
  Out a;
  a.U32(PmuType(d)).U32(kAttrSize).U64(d.config);
  a.U64(1);            // sample_period
  a.U64(SampleType(d));  // sample_type
  a.U64(0);            // read_format
  a.U64(kAttrSampleIdAll);
  a.U32(0).U32(0);     // wakeup_events, bp_type
  a.U64(0);            // config1
  a.U64(d.config2);    // config2
  a.Zeros(kAttrSize - a.size());
  return a.bytes;
}

// The sample_id trailer of every non-sample record: TID, TIME (when sampled), CPU, IDENTIFIER.
void SampleId(Out& out, const PerfDataDescription& d, int32_t pid, int32_t tid, int32_t cpu,
              uint64_t time) {
  out.Put(pid).Put(tid);
  if (d.sample_time) out.U64(time);
  out.Put(cpu).U32(0).U64(kEventId);
}

class RecordWriter {
 public:
  explicit RecordWriter(Out& data) : data_(data) {}

  // Appends a record of `type` whose body is `body`; fails when it exceeds a record's u16 size.
  Status Add(uint32_t type, uint16_t misc, const Out& body) {
    const size_t size = 8 + body.size();
    if (size > kMaxRecordSize)
      return Fail(fmt::format("a {} record of {} bytes does not fit perf's 16-bit record size",
                              RecordTypeName(type), size));
    data_.U32(type).U16(misc).U16(static_cast<uint16_t>(size)).Append(body.bytes);
    return {};
  }

 private:
  Out& data_;
};

Out AuxtraceInfoBody(const IntelPtInfo& i) {
  const size_t filter_bytes = i.filter.empty() ? 0 : (i.filter.size() + 1 + 7) / 8 * 8;
  Out body;
  body.U32(kAuxtraceIntelPt).U32(0);
  for (uint64_t word : {i.pmu_type, i.time_shift, i.time_mult, i.time_zero,
                        uint64_t{i.cap_user_time_zero}, i.tsc_bit, i.noretcomp_bit, i.have_sched_switch,
                        uint64_t{i.snapshot_mode}, uint64_t{i.per_cpu_mmaps}, i.mtc_bit, i.mtc_freq_bits,
                        uint64_t{i.tsc_ctc_ratio_n}, uint64_t{i.tsc_ctc_ratio_d}, i.cyc_bit,
                        i.max_non_turbo_ratio, uint64_t{i.filter.size()}})
    body.U64(word);
  if (filter_bytes) body.PaddedString(i.filter, 8);
  return body;
}

// cs_etm: the header words, then per CPU its magic, number, parameter count and registers.
Out AuxtraceInfoBody(const CsEtmInfo& i) {
  Out body;
  body.U32(kAuxtraceCsEtm).U32(0);
  body.U64(i.header_version);
  body.U64((uint64_t{i.pmu_type} << 32) | i.cpus.size());
  body.U64(i.snapshot ? 1 : 0);
  for (const CsEtmCpu& cpu : i.cpus) {
    body.U64(cpu.magic).U64(cpu.cpu);
    if (i.header_version >= 1) body.U64(cpu.params.size());
    for (const auto& [name, value] : cpu.params) body.U64(value);
  }
  return body;
}

Status WriteThreadStart(RecordWriter& w, const PerfDataDescription& d, const PerfThread& t,
                        uint64_t time) {
  Out comm;
  comm.Put(t.pid).Put(t.tid).PaddedString(t.comm.substr(0, 15), 8);
  SampleId(comm, d, t.pid, t.tid, t.cpu, time);
  if (auto st = w.Add(kRecordComm, kMiscCommExec, comm); !st) return st;
  for (const PerfMapping& m : t.mappings) {
    Out mmap;
    mmap.Put(t.pid).Put(t.tid).U64(m.address).U64(m.length).U64(m.pgoff);
    mmap.U32(0).U32(0).U64(0).U64(0);  // maj, min, ino, ino_generation
    mmap.U32(kProtReadExec).U32(kMapPrivate).PaddedString(m.filename, 8);
    SampleId(mmap, d, t.pid, t.tid, t.cpu, time);
    if (auto st = w.Add(kRecordMmap2, kMiscUser, mmap); !st) return st;
  }
  Out itrace;
  itrace.Put(t.pid).Put(t.tid);
  SampleId(itrace, d, t.pid, t.tid, t.cpu, time);
  return w.Add(kRecordItraceStart, 0, itrace);
}

// The kernel's sideband records, each with its IDENTIFIER (the trailer's last word) replaced.
Status AppendKernelRecords(Out& data, std::span<const uint8_t> records) {
  size_t at = 0;
  while (at < records.size()) {
    if (records.size() - at < 8)
      return Fail(fmt::format("kernel sideband: offset {:#x}: a record header cut short", at));
    uint16_t size = 0;
    uint32_t type = 0;
    std::memcpy(&type, records.data() + at, 4);
    std::memcpy(&size, records.data() + at + 6, 2);
    if (size < 16 || size > records.size() - at || type >= 64)
      return Fail(fmt::format("kernel sideband: offset {:#x}: not a kernel record with a sample id "
                              "(type {}, size {})", at, type, size));
    const size_t start = data.size();
    data.Append(records.subspan(at, size));
    std::memcpy(data.bytes.data() + start + size - 8, &kEventId, 8);
    at += size;
  }
  return {};
}

const PerfThread* ThreadOf(const PerfDataDescription& d, int32_t tid) {
  for (const auto& t : d.threads)
    if (t.tid == tid) return &t;
  return nullptr;
}

// The data section; `auxtrace_offsets` receives where each AUXTRACE record starts in it.
Result<std::vector<uint8_t>> DataSection(const PerfDataDescription& d, std::vector<uint64_t>& auxtrace_offsets) {
  Out data;
  RecordWriter w(data);
  const Out info = IsEtm(d) ? AuxtraceInfoBody(d.etm_info) : AuxtraceInfoBody(d.pt_info);
  if (auto st = w.Add(kRecordAuxtraceInfo, 0, info); !st) return tl::unexpected(st.error());
  for (const PerfThread& t : d.threads)
    if (auto st = WriteThreadStart(w, d, t, d.start_time); !st) return tl::unexpected(st.error());
  if (auto st = AppendKernelRecords(data, d.kernel_records); !st) return tl::unexpected(st.error());
  Out round;
  if (auto st = w.Add(kRecordFinishedRound, 0, round); !st) return tl::unexpected(st.error());

  std::map<uint32_t, uint64_t> aux_offset;  // per idx: where the next buffer starts in the AUX area
  uint64_t reference = 0;
  for (const PerfAuxBuffer& b : d.buffers) {
    const PerfThread* t = ThreadOf(d, b.tid);
    if (!t) return Fail(fmt::format("AUX buffer {} names thread {}, which has no COMM/MMAP records", b.idx, b.tid));
    const uint64_t padded = (b.bytes.size() + 7) / 8 * 8;
    const uint64_t offset = aux_offset[b.idx];
    aux_offset[b.idx] += padded;
    Out aux;
    aux.U64(offset).U64(b.bytes.size()).U64(0);
    SampleId(aux, d, t->pid, t->tid, b.cpu, d.end_time);
    if (auto st = w.Add(kRecordAux, 0, aux); !st) return tl::unexpected(st.error());
    auxtrace_offsets.push_back(data.size());
    data.U32(kRecordAuxtrace).U16(0).U16(kAuxtraceHeaderSize);
    data.U64(padded).U64(offset).U64(++reference).U32(b.idx).Put(b.tid).Put(b.cpu).U32(0);
    data.Append(b.bytes).Zeros(padded - b.bytes.size());
  }
  if (auto st = w.Add(kRecordFinishedRound, 0, round); !st) return tl::unexpected(st.error());
  for (const PerfThread& t : d.threads) {
    Out exit;
    exit.Put(t.pid).Put(t.pid).Put(t.tid).Put(t.tid).U64(d.end_time);
    SampleId(exit, d, t.pid, t.tid, t.cpu, d.end_time);
    if (auto st = w.Add(kRecordExit, 0, exit); !st) return tl::unexpected(st.error());
  }
  if (auto st = w.Add(kRecordFinishedRound, 0, round); !st) return tl::unexpected(st.error());
  return std::move(data.bytes);
}

std::vector<uint8_t> BuildIdSection(const std::vector<BuildIdEntry>& entries) {
  Out out;
  for (const BuildIdEntry& e : entries) {
    uint8_t id[20] = {};
    size_t n = 0;
    for (size_t i = 0; i + 1 < e.build_id.size() && n < sizeof id; i += 2)
      id[n++] = static_cast<uint8_t>(std::strtoul(e.build_id.substr(i, 2).c_str(), nullptr, 16));
    const size_t name_len = (e.filename.size() + 1 + kNameAlign - 1) / kNameAlign * kNameAlign;
    out.U32(0).U16(static_cast<uint16_t>(e.misc | kMiscBuildIdSize)).U16(static_cast<uint16_t>(8 + 4 + 24 + name_len));
    out.Put(e.pid).Append(std::span<const uint8_t>(id, sizeof id)).Put(static_cast<uint8_t>(n)).Zeros(3);
    out.PaddedString(e.filename, kNameAlign);
  }
  return out.bytes;
}

std::vector<std::pair<int, std::vector<uint8_t>>> FeatureSections(const PerfDataDescription& d,
                                                                  const std::vector<uint8_t>& attr,
                                                                  const std::vector<uint64_t>& auxtrace_offsets,
                                                                  uint64_t data_offset) {
  std::vector<std::pair<int, std::vector<uint8_t>>> out;
  auto string_feature = [&](int id, const std::string& s) {
    if (s.empty()) return;
    Out o;
    FeatureString(o, s);
    out.emplace_back(id, o.bytes);
  };
  out.emplace_back(kFeatBuildId, BuildIdSection(d.build_ids));
  string_feature(kFeatHostname, d.hostname);
  string_feature(kFeatOsRelease, d.osrelease);
  string_feature(kFeatVersion, d.version);
  string_feature(kFeatArch, d.arch);
  {
    Out o;
    o.U32(d.nr_cpus).U32(d.nr_cpus);
    out.emplace_back(kFeatNrCpus, o.bytes);
  }
  string_feature(kFeatCpuDesc, d.cpudesc);
  string_feature(kFeatCpuId, d.cpuid);
  if (!d.cmdline.empty()) {
    Out o;
    o.U32(static_cast<uint32_t>(d.cmdline.size()));
    for (const auto& arg : d.cmdline) FeatureString(o, arg);
    out.emplace_back(kFeatCmdline, o.bytes);
  }
  {
    Out o;
    o.U32(1).U32(kAttrSize).Append(attr).U32(1);
    FeatureString(o, PmuName(d) + "//");
    o.U64(kEventId);
    out.emplace_back(kFeatEventDesc, o.bytes);
  }
  {
    Out o;
    o.U32(1).U32(PmuType(d));
    FeatureString(o, PmuName(d));
    out.emplace_back(kFeatPmuMappings, o.bytes);
  }
  {
    Out o;
    o.U64(auxtrace_offsets.size());
    for (uint64_t offset : auxtrace_offsets) o.U64(data_offset + offset).U64(kAuxtraceHeaderSize);
    out.emplace_back(kFeatAuxtrace, o.bytes);
  }
  return out;
}

}  // namespace

Result<std::vector<uint8_t>> SerializePerfData(const PerfDataDescription& d) {
  const std::vector<uint8_t> attr = EncodeAttr(d);
  constexpr uint64_t kHeaderSize = 104;
  const uint64_t ids_offset = kHeaderSize;
  const uint64_t attrs_offset = ids_offset + 8;
  const uint64_t attr_entry = kAttrSize + 16;  // attr + its ids section
  const uint64_t data_offset = attrs_offset + attr_entry;

  std::vector<uint64_t> auxtrace_offsets;
  auto data = DataSection(d, auxtrace_offsets);
  if (!data) return tl::unexpected(data.error());
  const auto features = FeatureSections(d, attr, auxtrace_offsets, data_offset);

  Out file;
  file.U64(kMagicPerfFile2).U64(kHeaderSize).U64(attr_entry);
  file.U64(attrs_offset).U64(attr_entry);
  file.U64(data_offset).U64(data->size());
  file.U64(0).U64(0);  // event_types (unused)
  uint64_t bits[kFeatureBits / 64] = {};
  for (const auto& [id, bytes] : features) bits[id / 64] |= uint64_t{1} << (id % 64);
  for (uint64_t word : bits) file.U64(word);
  file.U64(kEventId);
  file.Append(attr).U64(ids_offset).U64(8);
  file.Append(*data);
  uint64_t section = file.size() + 16 * features.size();
  for (const auto& [id, bytes] : features) {
    file.U64(section).U64(bytes.size());
    section += bytes.size();
  }
  for (const auto& [id, bytes] : features) file.Append(bytes);
  return std::move(file.bytes);
}

Status WritePerfDataFile(const PerfDataDescription& description, const std::string& path, bool force) {
  if (path.empty()) return Fail("the output path is empty");
  struct stat st {};
  const auto exists_message = path + ": already exists (use --force to replace it)";
  if (!force && lstat(path.c_str(), &st) == 0) return Fail(exists_message);
  auto bytes = SerializePerfData(description);
  if (!bytes) return Fail(path + ": " + bytes.error().message);

  std::string temp = path + ".XXXXXX";
  const int fd = mkstemp(temp.data());
  if (fd < 0) return Fail(path + ": cannot create a temporary file next to it: " + std::strerror(errno));
  size_t done = 0;
  while (done < bytes->size()) {
    const ssize_t n = write(fd, bytes->data() + done, bytes->size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const std::string why = std::strerror(errno);
      close(fd);
      unlink(temp.c_str());
      return Fail(path + ": cannot write: " + why);
    }
    done += static_cast<size_t>(n);
  }
  fchmod(fd, 0644);
  if (close(fd) != 0) {
    unlink(temp.c_str());
    return Fail(path + ": cannot write: " + std::strerror(errno));
  }
  int moved = force ? std::rename(temp.c_str(), path.c_str())
                    : renameat2(AT_FDCWD, temp.c_str(), AT_FDCWD, path.c_str(), RENAME_NOREPLACE);
  if (moved != 0 && !force && (errno == EINVAL || errno == ENOSYS)) {
    moved = link(temp.c_str(), path.c_str());
    if (moved == 0) unlink(temp.c_str());
  }
  if (moved != 0) {
    const bool exists = errno == EEXIST;
    const std::string why = std::strerror(errno);
    unlink(temp.c_str());
    if (exists) return Fail(exists_message);
    return Fail(path + ": cannot move the temporary file into place: " + why);
  }
  return {};
}

}  // namespace ptprof::perf
