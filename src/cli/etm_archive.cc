#include "src/cli/etm_archive.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <unistd.h>

#include <fmt/format.h>

#include "decoders/etm/ini_file.h"
#include "decoders/etm/snapshot.h"
#include "sideband/file_bytes.h"
#include "sideband/perf/perf_data.h"
#include "src/archive/archive_reader.h"
#include "src/archive/archive_writer.h"
#include "src/archive/manifest.h"
#include "src/archive/provenance.h"
#include "src/archive/sha256.h"
#include "src/pipeline/session_perf_data.h"

namespace ptprof::cli {

namespace fs = std::filesystem;

namespace {

constexpr char kSnapshotFileKind[] = "coresight_file";
constexpr char kPerfDataKind[] = "perf_data";

// `file`'s path inside the snapshot directory `dir`, checked to be a valid member name.
Result<std::string> PathInSnapshot(const std::string& dir, const std::string& file) {
  const std::string rel = fs::path(file).lexically_normal().lexically_relative(
      fs::path(dir).lexically_normal()).generic_string();
  if (rel.empty() || rel.starts_with(".."))
    return Fail(file + ": lies outside the snapshot directory " + dir + ": cannot be archived");
  if (auto st = archive::CheckMemberName("coresight/" + rel); !st)
    return Fail(file + ": " + st.error().message);
  return rel;
}

// Every file the snapshot in `dir` reads, by its path inside `dir`, each once.
Result<std::vector<std::string>> SnapshotFiles(const std::string& dir) {
  auto snapshot = etm::LoadSnapshot(dir);
  if (!snapshot) return tl::unexpected(snapshot.error());
  std::vector<std::string> files{(fs::path(dir) / "snapshot.ini").string()};
  auto ini = etm::ReadIni(files[0]);
  if (!ini) return tl::unexpected(ini.error());
  const etm::IniSection* trace = ini->Find("trace");
  const etm::IniEntry* metadata = trace ? trace->Find("metadata") : nullptr;
  if (!metadata) return Fail(files[0] + ": [trace] has no metadata entry");
  files.push_back((fs::path(dir) / metadata->value).string());
  for (const etm::SnapshotDevice& device : snapshot->devices) {
    files.push_back(device.ini_file);
    for (const etm::MemoryDump& dump : device.dumps)
      if (dump.missing.empty()) files.push_back(dump.file);
  }
  for (const etm::TraceBuffer& buffer : snapshot->buffers) files.push_back(buffer.file);
  std::vector<std::string> rel;
  std::set<std::string> seen;
  for (const std::string& file : files) {
    auto r = PathInSnapshot(dir, file);
    if (!r) return tl::unexpected(r.error());
    if (seen.insert(*r).second) rel.push_back(*r);
  }
  return rel;
}

Status WriteFile(const fs::path& path, const std::vector<uint8_t>& bytes) {
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) return Fail(path.string() + ": cannot write the extracted member");
  return {};
}

// A recorded binary path as a relative path under a symfs root: no empty, "." or ".." parts.
Result<std::string> UnderSymfs(const std::string& recorded) {
  std::string rel = fs::path(recorded).relative_path().lexically_normal().generic_string();
  if (rel.empty() || rel.starts_with(".."))
    return Fail("image path '" + recorded + "' cannot be restored under a symfs root");
  return rel;
}

}  // namespace

Result<EtmArchiveSummary> WriteSnapshotArchive(const std::string& dir, const EtmArchiveOptions& options) {
  auto files = SnapshotFiles(dir);
  if (!files) return tl::unexpected(files.error());
  auto writer = archive::ArchiveWriter::Create(options.output, options.force);
  if (!writer) return tl::unexpected(writer.error());
  archive::Manifest manifest = archive::NewManifest(options.tool, kCoreSightSnapshotSource, {dir});
  for (const std::string& rel : *files) {
    auto bytes = ReadFileBytes((fs::path(dir) / rel).string());
    if (!bytes) return tl::unexpected(bytes.error());
    archive::SidebandEntry entry{kSnapshotFileKind, rel, "coresight/" + rel};
    if (auto st = writer->Add(entry.member, *bytes); !st) return tl::unexpected(st.error());
    manifest.sideband.push_back(std::move(entry));
  }
  if (auto st = writer->Finish(archive::ManifestToJson(manifest)); !st) return tl::unexpected(st.error());
  return EtmArchiveSummary{files->size(), 0, 0};
}

bool IsCsEtmPerfData(const std::string& path) {
  auto data = perf::ReadPerfData(path);
  return data && data->cs_etm.has_value();
}

Result<EtmArchiveSummary> WritePerfEtmArchive(const std::string& path, const EtmArchiveOptions& options) {
  auto bytes = ReadFileBytes(path);
  if (!bytes) return tl::unexpected(bytes.error());
  auto data = perf::ParsePerfData(*bytes, path);
  if (!data) return tl::unexpected(data.error());
  auto writer = archive::ArchiveWriter::Create(options.output, options.force);
  if (!writer) return tl::unexpected(writer.error());
  archive::Manifest manifest = archive::NewManifest(options.tool, kCsEtmPerfDataSource, {path});
  manifest.triggers = options.triggers;
  if (!options.source_paths.empty()) manifest.source.paths = options.source_paths;
  for (const auto& [name, value] : options.parameters) manifest.pt_config[name] = value;
  archive::SidebandEntry perf_entry{kPerfDataKind, "perf.data", "sideband/perf.data"};
  if (auto st = writer->Add(perf_entry.member, *bytes); !st) return tl::unexpected(st.error());
  manifest.sideband.push_back(perf_entry);

  // The binaries decode would load: every executable mmap's file, each stored once.
  EtmArchiveSummary summary{1, 0, 0};
  std::set<std::string> done;
  std::map<std::string, std::string> member_of_digest;
  for (const perf::PerfRecord& record : data->sideband) {
    const auto* mmap = std::get_if<perf::MmapRecord>(&record.body);
    if (!mmap || !mmap->executable || mmap->filename.empty() || mmap->filename[0] == '[') continue;
    if (!done.insert(mmap->filename).second) continue;
    const std::string file = FindBinary(mmap->filename, "", options.symfs, options.buildid_dir);
    if (file.empty()) {
      std::fprintf(stderr, "ptprof: warning: %s: binary %s not found (--symfs): its code is unknown "
                   "in the archive too\n", path.c_str(), mmap->filename.c_str());
      ++summary.missing;
      continue;
    }
    if (auto rel = UnderSymfs(mmap->filename); !rel) return Fail(path + ": " + rel.error().message);
    auto image_bytes = ReadFileBytes(file);
    if (!image_bytes) return tl::unexpected(image_bytes.error());
    archive::ImageEntry image;
    image.kind = archive::ImageEntry::Kind::kElf;
    image.path = mmap->filename;
    image.size = image_bytes->size();
    const std::string digest = archive::DigestHex(archive::Sha256::Of(*image_bytes));
    auto known = member_of_digest.find(digest);
    if (known != member_of_digest.end()) {
      image.member = known->second;
    } else {
      image.member = "images/" + digest.substr(0, 16) + "/" + fs::path(file).filename().string();
      if (auto st = archive::CheckMemberName(image.member); !st)
        image.member = "images/" + digest.substr(0, 16) + "/binary";
      member_of_digest[digest] = image.member;
      if (auto st = writer->Add(image.member, *image_bytes); !st) return tl::unexpected(st.error());
      ++summary.binaries;
    }
    manifest.images.push_back(std::move(image));
  }
  if (auto st = writer->Finish(archive::ManifestToJson(manifest)); !st) return tl::unexpected(st.error());
  return summary;
}

Result<std::optional<RestoredEtmInput>> RestoreEtmArchive(const std::string& path) {
  auto reader = archive::ArchiveReader::Open(path);
  if (!reader) return tl::unexpected(reader.error());
  auto manifest = archive::ManifestFromJson(reader->manifest());
  if (!manifest) return Fail(path + ": offset 0x0: manifest: " + manifest.error().message);
  const std::string kind = manifest->source.kind;
  if (kind != kCoreSightSnapshotSource && kind != kCsEtmPerfDataSource) return std::nullopt;
  if (auto st = archive::CheckMembersExist(*manifest, reader->members()); !st)
    return Fail(path + ": offset 0x0: manifest: " + st.error().message);
  auto files = ExtractedFiles::Create();
  if (!files) return tl::unexpected(files.error());
  RestoredEtmInput restored{kind, "", "", *files, *manifest};
  const fs::path root = restored.files->dir();
  // Every member is read and checked, also those this version does not restore.
  std::map<std::string, std::vector<uint8_t>> contents;
  for (const archive::MemberInfo& member : reader->members()) {
    auto bytes = reader->Read(member);
    if (!bytes) return tl::unexpected(bytes.error());
    contents[member.name] = std::move(*bytes);
  }
  for (const archive::SidebandEntry& entry : manifest->sideband) {
    if (kind == kCoreSightSnapshotSource && entry.kind == kSnapshotFileKind) {
      if (auto st = archive::CheckMemberName(entry.name); !st)
        return Fail(path + ": offset 0x0: manifest: sideband '" + entry.name + "': " + st.error().message);
      if (auto st = WriteFile(root / "snapshot" / entry.name, contents[entry.member]); !st)
        return tl::unexpected(st.error());
      restored.path = (root / "snapshot").string();
    } else if (kind == kCsEtmPerfDataSource && entry.kind == kPerfDataKind) {
      restored.path = (root / "perf.data").string();
      if (auto st = WriteFile(restored.path, contents[entry.member]); !st) return tl::unexpected(st.error());
    }
  }
  if (restored.path.empty())
    return Fail(path + ": offset 0x0: manifest: a " + kind + " archive without its " +
                (kind == kCsEtmPerfDataSource ? "perf_data" : "coresight_file") + " sideband member");
  if (kind == kCsEtmPerfDataSource) {
    restored.symfs = (root / "symfs").string();
    std::error_code ec;
    fs::create_directories(restored.symfs, ec);
    for (const archive::ImageEntry& image : manifest->images) {
      auto rel = UnderSymfs(image.path);
      if (!rel) return Fail(path + ": offset 0x0: manifest: " + rel.error().message);
      if (auto st = WriteFile(fs::path(restored.symfs) / *rel, contents[image.member]); !st)
        return tl::unexpected(st.error());
    }
  }
  return std::optional<RestoredEtmInput>(std::move(restored));
}

}  // namespace ptprof::cli
