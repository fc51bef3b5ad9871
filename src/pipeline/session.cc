#include "src/pipeline/session.h"

#include <cstdlib>
#include <filesystem>

#include <unistd.h>

#include "sideband/build_id.h"
#include "sideband/file_bytes.h"
#include "sideband/kallsyms.h"
#include "src/archive/provenance.h"
#include "src/pipeline/session_archive.h"
#include "src/pipeline/session_perf_data.h"

namespace ptprof {

namespace {

std::string Absolute(const std::string& path) {
  std::error_code ignored;
  auto absolute = std::filesystem::absolute(path, ignored);
  return absolute.empty() ? path : absolute.lexically_normal().string();
}

Status AddElfImage(const ElfImageSpec& spec, Session& session) {
  if (auto st = session.images.AddElf(spec); !st) return st;
  auto build_id = ReadBuildId(spec.file);
  if (!build_id) return tl::unexpected(build_id.error());
  std::error_code error;
  const uint64_t bytes_on_disk = std::filesystem::file_size(spec.file, error);
  if (error) return Fail(spec.file + ": cannot read its size: " + error.message());
  archive::ImageEntry entry;
  entry.kind = archive::ImageEntry::Kind::kElf;
  entry.path = Absolute(spec.file);
  entry.build_id = build_id->value_or("");
  entry.base = spec.base;
  entry.size = bytes_on_disk;
  session.manifest.images.push_back(entry);
  session.image_sources.push_back({spec.file, 0});
  return {};
}

Status AddRawImage(const RawImageSpec& spec, Session& session) {
  if (auto st = session.images.AddRaw(spec); !st) return st;
  archive::ImageEntry entry;
  entry.kind = archive::ImageEntry::Kind::kRaw;
  entry.path = Absolute(spec.file);
  entry.address = spec.address;
  entry.file_offset = spec.file_offset;
  entry.size = session.images.sections().back().size;  // an open range resolved to the file's end
  session.manifest.images.push_back(entry);
  session.image_sources.push_back({spec.file, spec.file_offset});
  return {};
}

}  // namespace

void AddKallsymsSymbols(const std::vector<uint8_t>& text, const std::string& name,
                        Session& session) {
  auto entries =
      ParseKallsyms(std::string_view(reinterpret_cast<const char*>(text.data()), text.size()), name);
  if (!entries) {
    session.warnings.push_back(entries.error().message + "; kernel addresses stay unnamed");
    return;
  }
  for (Symbol& symbol : KallsymsTextSymbols(*entries)) session.images.AddSymbol(std::move(symbol));
}

Result<std::shared_ptr<ExtractedFiles>> ExtractedFiles::Create() {
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/ptprof-ptar-XXXXXX";
  if (!mkdtemp(pattern.data()))
    return Fail(pattern + ": cannot create a temporary directory for the archive's images");
  return std::shared_ptr<ExtractedFiles>(new ExtractedFiles(pattern));
}

ExtractedFiles::~ExtractedFiles() {
  std::error_code ignored;
  std::filesystem::remove_all(dir_, ignored);
}

Result<Session> OpenRawSession(const std::string& trace_file, const RawInputOptions& options) {
  Session session;
  session.input = trace_file;
  session.kind = InputKind::kRawPt;
  auto bytes = SharedBytes::MapFile(trace_file);
  if (!bytes) return tl::unexpected(bytes.error());
  if (bytes->empty()) return Fail(trace_file + ": offset 0x0: empty file");
  session.stream_bytes.push_back(std::move(*bytes));
  session.manifest.source = {"raw_pt", {Absolute(trace_file)}, archive::HostName()};
  session.manifest.pt = options.params;
  session.manifest.streams.push_back({"raw", "intel_pt", kUnknownId, kUnknownId, kUnknownId, ""});
  for (const auto& image : options.images) {
    Status status = std::holds_alternative<ElfImageSpec>(image)
                        ? AddElfImage(std::get<ElfImageSpec>(image), session)
                        : AddRawImage(std::get<RawImageSpec>(image), session);
    if (!status) return tl::unexpected(status.error());
  }
  if (!options.kallsyms.empty()) {
    auto kallsyms = ReadFileBytes(options.kallsyms);
    if (!kallsyms) return tl::unexpected(kallsyms.error());
    AddKallsymsSymbols(*kallsyms, options.kallsyms, session);
    session.manifest.sideband.push_back({"kallsyms", "kallsyms", ""});
    session.sideband_bytes.push_back(std::move(*kallsyms));
  }
  return session;
}

Result<Session> OpenSession(const std::string& input, const RawInputOptions& options,
                            bool options_given) {
  auto kind = ClassifyPath(input);
  if (!kind) return tl::unexpected(kind.error());
  switch (*kind) {
    // Unknown content is given to the raw PT reader too: a PSB may come after the first 4 KiB
    // (a wrapped snapshot buffer), and the decoders say precisely when there is none.
    case InputKind::kRawPt:
    case InputKind::kUnknown:
      return OpenRawSession(input, options);
    case InputKind::kPtar:
      if (options_given)
        return Fail(input + ": a .ptar carries its own images and PT parameters; leave out "
                            "--elf, --raw, --kallsyms and the PT options");
      return OpenArchiveSession(input);
    case InputKind::kPerfData:
    case InputKind::kPerfDataPipe:
      if (!options.images.empty() || options.params.cpu || options.params.cpu_auto ||
          options.params.mtc_freq || options.params.nom_freq || options.params.cpuid_0x15_eax ||
          options.params.cpuid_0x15_ebx || options.params.filter[0].cfg ||
          options.params.filter[1].cfg || options.params.filter[2].cfg ||
          options.params.filter[3].cfg)
        return Fail(input + ": a perf.data names its binaries and carries its PT parameters; "
                            "leave out --elf, --raw, --addr-filter and the PT options");
      return OpenPerfDataSession(input, options);
    default:
      return Fail(input + ": offset 0x0: this is " + InputKindName(*kind) +
                  ", which this command does not read yet");
  }
}

Result<std::vector<size_t>> SelectStreams(const Session& session,
                                          const std::vector<std::string>& names) {
  std::vector<size_t> selected;
  const auto& streams = session.manifest.streams;
  for (size_t i = 0; i < streams.size(); ++i) {
    bool wanted = names.empty();
    for (const std::string& name : names) wanted = wanted || name == streams[i].name;
    if (wanted) selected.push_back(i);
  }
  for (const std::string& name : names) {
    bool known = false;
    for (const auto& stream : streams) known = known || stream.name == name;
    if (known) continue;
    std::string there;
    for (const auto& stream : streams) there += (there.empty() ? "" : ", ") + stream.name;
    return Fail(session.input + ": --stream " + name + ": no such trace stream (there are: " +
                there + ")");
  }
  return selected;
}

Result<std::optional<Session>> OpenIfArchive(const std::string& path, bool options_given) {
  auto kind = ClassifyPath(path);
  // Not being able to classify is the raw reader's business: it names the problem itself.
  if (!kind || *kind != InputKind::kPtar) return std::optional<Session>();
  auto session = OpenSession(path, RawInputOptions{}, options_given);
  if (!session) return tl::unexpected(session.error());
  return std::optional<Session>(std::move(*session));
}

}  // namespace ptprof
