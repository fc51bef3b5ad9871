#include "src/analyses/crossval/branch_inputs.h"

#include <cstdio>
#include <set>
#include <variant>

#include <fmt/format.h>

#include "decoders/lbr/swbt_bursts.h"
#include "sideband/perf/perf_data.h"
#include "src/archive/archive_reader.h"
#include "src/archive/manifest.h"
#include "src/pipeline/input_kind.h"
#include "src/pipeline/session_perf_data.h"

namespace ptprof {

namespace {

Status WriteBytes(const std::string& path, const std::vector<uint8_t>& bytes) {
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return Fail(path + ": cannot create");
  const bool ok = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  if (std::fclose(f) != 0 || !ok) return Fail(path + ": cannot write");
  return {};
}

Result<std::optional<BranchInput>> OpenLbr(const std::string& path,
                                           const BranchInputOptions& options) {
  auto data = perf::ReadPerfData(path, perf::PerfDataOptions{true});
  if (!data) return tl::unexpected(data.error());
  if (!HasBranchStacks(*data)) {
    if (!data->aux_streams.empty()) return std::optional<BranchInput>();
    return Fail(fmt::format("{}: no branch stacks: no event samples PERF_SAMPLE_BRANCH_STACK and "
                            "there is no AUX trace (record with perf record -b)", path));
  }
  auto lbr = ReadPerfBranchStacks(*data);
  if (!lbr) return tl::unexpected(lbr.error());
  BranchInput in;
  in.path = path;
  in.kind = "lbr";
  for (LbrSample& s : *lbr) in.samples.push_back(std::move(s.sample));
  std::set<std::string> loaded;
  std::vector<std::string> missing;
  for (const perf::PerfRecord& record : data->sideband) {
    const auto* mmap = std::get_if<perf::MmapRecord>(&record.body);
    if (!mmap || !mmap->executable || mmap->len == 0) continue;
    in.normaliser.AddMapping(mmap->pid, mmap->addr, mmap->len, mmap->pgoff, mmap->filename);
    if (mmap->filename.empty() || mmap->filename[0] == '[' || !loaded.insert(mmap->filename).second)
      continue;
    std::string build_id;
    for (const auto& entry : data->features.build_ids)
      if (entry.filename == mmap->filename) build_id = entry.build_id;
    std::string file = FindBinary(mmap->filename, build_id, options.symfs, options.buildid_dir);
    Status added = file.empty() ? Fail("not found") : in.images.AddElf({file, mmap->addr - mmap->pgoff});
    if (!added) missing.push_back(mmap->filename);
  }
  if (!missing.empty())
    in.warnings.push_back(fmt::format("{}: {} binar{} not found (no symbols or code for their addresses; "
                                      "--symfs DIR): {}{}", path, missing.size(),
                                      missing.size() == 1 ? "y" : "ies", missing.front(),
                                      missing.size() > 1 ? ", ..." : ""));
  return std::optional<BranchInput>(std::move(in));
}

Result<std::optional<BranchInput>> OpenSwbt(const std::string& path) {
  auto reader = archive::ArchiveReader::Open(path);
  if (!reader) return tl::unexpected(reader.error());
  auto manifest = archive::ManifestFromJson(reader->manifest());
  if (!manifest) return Fail(path + ": " + manifest.error().message);
  if (manifest->source.kind != kSwbtSourceKind) return std::optional<BranchInput>();
  BranchInput in;
  in.path = path;
  in.kind = "swbt";
  for (const archive::SidebandEntry& entry : manifest->sideband) {
    auto bytes = reader->Read(entry.member);
    if (!bytes) return tl::unexpected(bytes.error());
    if (entry.kind == kSwbtBurstsKind) {
      auto bursts = ReadSwbtBursts(*bytes, path + ": " + entry.member);
      if (!bursts) return tl::unexpected(bursts.error());
      for (BranchSample& s : *bursts) {
        s.sample = in.samples.size();
        in.samples.push_back(std::move(s));
      }
    } else if (entry.kind == kSwbtMapsKind) {
      // "sideband/maps.pid<PID>.<start|exit>.txt"
      int64_t pid = -1;
      if (size_t at = entry.member.find("maps.pid"); at != std::string::npos)
        pid = std::strtoll(entry.member.c_str() + at + 8, nullptr, 10);
      in.normaliser.AddProcMaps(pid, std::string(bytes->begin(), bytes->end()));
    }
  }
  // The ELF files, for symbols and code.
  auto extracted = ExtractedFiles::Create();
  if (!extracted) return tl::unexpected(extracted.error());
  in.extracted = *extracted;
  for (size_t i = 0; i < manifest->images.size(); ++i) {
    const archive::ImageEntry& image = manifest->images[i];
    if (image.kind != archive::ImageEntry::Kind::kElf) continue;
    auto bytes = reader->Read(image.member);
    if (!bytes) return tl::unexpected(bytes.error());
    std::string file = fmt::format("{}/{}-{}", in.extracted->dir(), i, BaseNameOf(image.path));
    if (auto st = WriteBytes(file, *bytes); !st) return tl::unexpected(st.error());
    if (auto st = in.images.AddElf({file, image.base}); !st)
      in.warnings.push_back(fmt::format("{}: image {}: {}", path, image.path, st.error().message));
  }
  return std::optional<BranchInput>(std::move(in));
}

}  // namespace

Result<std::optional<BranchInput>> OpenBranchInput(const std::string& path,
                                                   const BranchInputOptions& options) {
  auto kind = ClassifyPath(path);
  if (!kind) return tl::unexpected(kind.error());
  if (*kind == InputKind::kPerfData || *kind == InputKind::kPerfDataPipe) return OpenLbr(path, options);
  if (*kind == InputKind::kPtar) return OpenSwbt(path);
  return std::optional<BranchInput>();
}

}  // namespace ptprof
