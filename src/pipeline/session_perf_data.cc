#include "src/pipeline/session_perf_data.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <utility>
#include <variant>

#include "sideband/build_id.h"
#include "sideband/file_bytes.h"
#include "sideband/perf/perf_auxtrace_info.h"
#include "src/pipeline/session_tasks.h"

namespace ptprof {

namespace {

uint64_t ConfigField(uint64_t config, const std::string& name) {
  for (const auto& [field, value] : perf::DecodeIntelPtConfig(config))
    if (field == name) return value;
  return 0;
}

// family/model/stepping from a cpuid feature "GenuineIntel,6,78,3"; nullopt for other vendors.
std::optional<pt::PtCpu> CpuFromCpuid(const std::string& cpuid) {
  unsigned family = 0, model = 0, stepping = 0;
  char vendor[32] = {};
  if (std::sscanf(cpuid.c_str(), "%31[^,],%u,%u,%u", vendor, &family, &model, &stepping) != 4)
    return std::nullopt;
  if (std::string(vendor) != "GenuineIntel" || family > 0xffff || model > 0xff || stepping > 0xff)
    return std::nullopt;
  return pt::PtCpu{static_cast<uint16_t>(family), static_cast<uint8_t>(model),
                   static_cast<uint8_t>(stepping)};
}

bool IsFile(const std::filesystem::path& path) {
  std::error_code ignored;
  return std::filesystem::is_regular_file(path, ignored);  // follows symlinks, as perf's cache uses
}

// Whether `file` is the binary with `build_id` (any ELF when the build-id is unknown).
bool Matches(const std::string& file, const std::string& build_id) {
  auto own = ReadBuildId(file);
  if (!own) return false;  // unreadable or not ELF (perf caches kallsyms text there too)
  return build_id.empty() || !own->has_value() || **own == build_id;
}

std::string Hex(const std::vector<uint8_t>& bytes) {
  static const char kDigits[] = "0123456789abcdef";
  std::string out;
  for (uint8_t byte : bytes) {
    out += kDigits[byte >> 4];
    out += kDigits[byte & 15];
  }
  return out;
}

// The build-id the file records for a mapped path: MMAP2's own, else the build_id feature's
// (perf names the kernel "[kernel.kallsyms]" there and "[kernel.kallsyms]_text" in its mmap).
std::string BuildIdOf(const perf::PerfData& data, const perf::MmapRecord& mmap) {
  if (!mmap.build_id.empty()) return Hex(mmap.build_id);
  for (const auto& entry : data.features.build_ids)
    if (entry.filename == mmap.filename ||
        (entry.filename == "[kernel.kallsyms]" && mmap.filename.rfind(entry.filename, 0) == 0))
      return entry.build_id;
  return "";
}


// A file holding a mapping's bare bytes (as `export --perf-data --images-dir` writes them): not
// ELF, no build-id recorded, found under `symfs` or at its path.
// `elf_like`: also when the bytes begin like an ELF file.
std::string FindBareImage(const std::string& path, const std::string& build_id,
                          const std::string& symfs, bool elf_like = false) {
  namespace fs = std::filesystem;
  if (!build_id.empty() || path.empty() || path[0] != '/') return "";
  const fs::path file = symfs.empty() ? fs::path(path) : fs::path(symfs) / fs::path(path).relative_path();
  if (!IsFile(file) || (!elf_like && ReadBuildId(file.string()))) return "";
  return file.string();
}

// Loads the image an executable mapping names into the session (images, manifest, sources).
// Fails with "binary PATH (build-id ...): why" when it is not available.
Status LoadMapping(const perf::PerfData& data, const perf::PerfRecord& record,
                   const perf::MmapRecord& mmap, const RawInputOptions& options, Session& session) {
  const std::string build_id = BuildIdOf(data, mmap);
  const std::string what = "binary " + mmap.filename + " (build-id " +
                           (build_id.empty() ? std::string("unknown") : build_id) + ")";
  archive::ImageEntry entry;
  entry.path = mmap.filename;
  entry.build_id = build_id;
  entry.pid = static_cast<int32_t>(mmap.pid);
  if (record.sample_id.time) entry.time_ns = *record.sample_id.time;
  std::string file = FindBinary(mmap.filename, build_id, options.symfs, options.buildid_dir);
  std::error_code error;
  const ElfImageSpec spec{file, mmap.addr - mmap.pgoff};
  Status elf = file.empty() ? Fail("not found") : session.images.AddElf(spec);
  // Bare bytes may begin like an ELF file (a copy of a mapping that holds the ELF header).
  if (!elf && !file.empty() && !FindBareImage(mmap.filename, build_id, options.symfs, true).empty())
    file.clear();
  if (!file.empty()) {
    if (!elf) return Fail(what + ": " + elf.error().message);
    entry.kind = archive::ImageEntry::Kind::kElf;
    if (entry.build_id.empty()) {
      auto own = ReadBuildId(file);
      if (own && own->has_value()) entry.build_id = **own;
    }
    entry.base = spec.base;
    entry.size = std::filesystem::file_size(file, error);
    session.image_sources.push_back({file, 0});
  } else {
    file = FindBareImage(mmap.filename, build_id, options.symfs, /*elf_like=*/true);
    if (file.empty()) return Fail(what + ": not found");
    const uint64_t file_size = std::filesystem::file_size(file, error);
    if (error || mmap.pgoff >= file_size) return Fail(what + ": shorter than its mapping's offset");
    const RawImageSpec raw{file, mmap.pgoff, std::min(mmap.len, file_size - mmap.pgoff), mmap.addr};
    if (auto added = session.images.AddRaw(raw); !added)
      return Fail(what + ": " + added.error().message);
    entry.kind = archive::ImageEntry::Kind::kRaw;
    entry.address = raw.address;
    entry.file_offset = raw.file_offset;
    entry.size = raw.size;
    session.image_sources.push_back({file, raw.file_offset});
  }
  session.manifest.images.push_back(entry);
  return {};
}

// Loads DIR/kcore (its PT_LOAD segments at their kernel addresses) into the session and, when
// `symbols`, the text symbols of DIR/kallsyms.
Status LoadKcore(const std::string& dir, bool symbols, Session& session) {
  const std::string kcore = dir + "/kcore";
  if (auto added = session.images.AddElf(ElfImageSpec{kcore, 0}); !added)
    return Fail(dir + ": --kcore: " + added.error().message);
  archive::ImageEntry entry;
  entry.kind = archive::ImageEntry::Kind::kElf;
  entry.path = kcore;
  entry.pid = -1;
  std::error_code error;
  entry.size = std::filesystem::file_size(kcore, error);
  session.manifest.images.push_back(entry);
  session.image_sources.push_back({kcore, 0});
  if (!symbols) return {};
  auto text = ReadFileBytes(dir + "/kallsyms");
  if (!text) return tl::unexpected(text.error());
  AddKallsymsSymbols(*text, dir + "/kallsyms", session);
  session.manifest.sideband.push_back({"kallsyms", "kallsyms", ""});
  session.sideband_bytes.push_back(std::move(*text));
  return {};
}

}  // namespace

pt::PtParams PtParamsFromPerfData(const perf::PerfData& data, std::vector<std::string>* notes) {
  pt::PtParams params;
  params.cpu = CpuFromCpuid(data.features.cpuid);
  if (const perf::PerfAttr* aux = data.AuxAttr(); aux && ConfigField(aux->attr.config, "mtc"))
    params.mtc_freq = static_cast<uint8_t>(ConfigField(aux->attr.config, "mtc_period") & 0xf);
  if (data.intel_pt) {
    params.nom_freq = static_cast<uint8_t>(data.intel_pt->max_non_turbo_ratio);
    params.cpuid_0x15_eax = data.intel_pt->tsc_ctc_ratio_d;
    params.cpuid_0x15_ebx = data.intel_pt->tsc_ctc_ratio_n;
    if (!data.intel_pt->filter.empty() && notes)
      notes->push_back(data.name + ": AUXTRACE_INFO filter: \"" + data.intel_pt->filter +
                       "\" is not applied (address filters are not resolved from perf.data yet)");
  }
  return params;
}

std::string FindBinary(const std::string& path, const std::string& build_id,
                       const std::string& symfs, const std::string& buildid_dir) {
  namespace fs = std::filesystem;
  std::vector<fs::path> candidates;
  if (!symfs.empty()) candidates.push_back(fs::path(symfs) / fs::path(path).relative_path());
  if (!buildid_dir.empty() && build_id.size() > 2) {
    const fs::path link = fs::path(buildid_dir) / ".build-id" / build_id.substr(0, 2) /
                          build_id.substr(2);
    candidates.push_back(link / "elf");
    candidates.push_back(link);
    const fs::path by_path = fs::path(buildid_dir) / fs::path(path).relative_path() / build_id;
    candidates.push_back(by_path / "elf");
    candidates.push_back(by_path);
  }
  if (symfs.empty() && !path.empty() && path[0] == '/') candidates.push_back(path);
  for (const fs::path& candidate : candidates)
    if (IsFile(candidate) && Matches(candidate.string(), build_id)) return candidate.string();
  return "";
}

Result<Session> SessionFromPerfData(perf::PerfData data, const std::string& path,
                                    const RawInputOptions& options) {
  if (data.cs_etm)
    return Fail(path + ": AUXTRACE_INFO: cs_etm trace; this command reads intel_pt perf.data only (decode, dump, delta and archive read cs_etm)");
  if (!data.intel_pt) return Fail(path + ": AUXTRACE_INFO: no intel_pt trace in this perf.data");
  if (data.aux_streams.empty())
    return Fail(path + ": no AUXTRACE data: the intel_pt trace was not saved in this perf.data");

  Session session;
  session.input = path;
  session.kind = data.pipe_mode ? InputKind::kPerfDataPipe : InputKind::kPerfData;
  session.manifest.source = {"perf_data", {path}, data.features.hostname};
  session.manifest.pt = PtParamsFromPerfData(data, &session.warnings);
  for (const perf::AuxStream& stream : data.aux_streams) {
    archive::StreamEntry entry;
    entry.name = stream.name;  // as the reader names it
    entry.format = "intel_pt";
    if (stream.cpu) entry.cpu = static_cast<int32_t>(*stream.cpu);
    if (stream.tid) entry.tid = static_cast<int32_t>(*stream.tid);
    session.manifest.streams.push_back(entry);
    session.stream_bytes.push_back(data.StreamBytes(stream));
  }
  if (auto clock = data.clock())
    session.manifest.clock =
        archive::ClockEntry{clock->time_shift, clock->time_mult, clock->time_zero};

  // Every executable mapping's image is loaded once per (file, address, offset), when the
  // sideband first maps it; missing files are reported once per file.
  auto tasks = std::make_shared<SessionTasks>();
  tasks->clock = data.clock();
  tasks->per_cpu = data.intel_pt->per_cpu_mmaps;
  if (!options.kallsyms.empty()) {
    auto text = ReadFileBytes(options.kallsyms);
    if (!text) return tl::unexpected(text.error());
    AddKallsymsSymbols(*text, options.kallsyms, session);
    session.manifest.sideband.push_back({"kallsyms", "kallsyms", ""});
    session.sideband_bytes.push_back(std::move(*text));
  }
  // perf record --kcore: the kernel's code (kcore, an ELF core file of the kernel's text and
  // modules at their addresses) replaces the kernel mappings' binaries.
  const bool kcore = !options.kcore_dir.empty() && options.load_images;
  if (kcore) {
    const size_t first_section = session.images.sections().size();
    auto loaded = LoadKcore(options.kcore_dir, options.kallsyms.empty(), session);
    if (!loaded) return tl::unexpected(loaded.error());
    tasks->spaces.Map(AddressSpaces::kKernel, 0, Mapping{0, 0, tasks->image_sections.size()});
    tasks->image_sections.emplace_back(first_section, session.images.sections().size());
  }
  std::map<std::tuple<std::string, uint64_t, uint64_t>, std::optional<size_t>> image_of_key;
  std::set<std::string> reported;
  auto image_of = [&](const perf::PerfRecord& record,
                      const perf::MmapRecord& mmap) -> std::optional<size_t> {
    if (!options.load_images || mmap.filename.empty()) return std::nullopt;
    if (kcore && mmap.pid == UINT32_MAX) return std::nullopt;  // kcore holds the kernel's code
    auto [known, added_key] = image_of_key.try_emplace({mmap.filename, mmap.addr, mmap.pgoff});
    if (!added_key) return known->second;
    const size_t first_section = session.images.sections().size();
    auto entry = LoadMapping(data, record, mmap, options, session);
    if (!entry) {
      if (reported.insert(mmap.filename).second)
        session.warnings.push_back(path + ": " + entry.error().message + "; its code decodes as gaps");
      return std::nullopt;
    }
    known->second = tasks->image_sections.size();
    tasks->image_sections.emplace_back(first_section, session.images.sections().size());
    return known->second;
  };
  AddPerfSideband(data, image_of, *tasks);
  session.tasks = std::move(tasks);
  return session;
}

Result<Session> OpenPerfDataSession(const std::string& path, const RawInputOptions& options) {
  auto data = perf::ReadPerfData(path);
  if (!data) return tl::unexpected(data.error());
  return SessionFromPerfData(std::move(*data), path, options);
}

}  // namespace ptprof
