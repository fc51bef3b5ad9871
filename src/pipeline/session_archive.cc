#include "src/pipeline/session_archive.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>

#include <fmt/format.h>

#include "sideband/file_bytes.h"
#include "sideband/kallsyms.h"
#include "src/archive/archive_reader.h"
#include "src/archive/archive_writer.h"
#include "src/archive/provenance.h"
#include "src/model/decode_defaults.h"
#include "src/pipeline/member_reads.h"

namespace ptprof {

namespace {

// The last path component with every character a member name does not allow replaced by '_'.
std::string SafeBaseName(const std::string& path) {
  std::string base = std::filesystem::path(path).filename().string();
  for (char& c : base) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '_' || c == '+' || c == '-';
    if (!ok) c = '_';
  }
  if (base.empty() || base == "." || base == "..") base = "image";
  return base.substr(0, 200);
}

// Trace streams from this size on are decompressed to a file and mapped instead of held in the
// heap: a multi-GB trace then costs disk in the session's private directory (TMPDIR), not memory.
// PTPROF_MAP_STREAMS_FROM=BYTES changes the size (the tests use it on small archives).
uint64_t MapStreamsFrom() {
  constexpr uint64_t kDefault = 16ull << 20;
  const char* text = std::getenv("PTPROF_MAP_STREAMS_FROM");
  if (!text || !*text) return kDefault;
  char* end = nullptr;
  const unsigned long long value = std::strtoull(text, &end, 0);
  return *end == '\0' ? value : kDefault;
}

Result<std::vector<uint8_t>> ImageBytes(const archive::ImageEntry& entry,
                                        const ImageSource& source) {
  if (entry.kind == archive::ImageEntry::Kind::kElf) return ReadFileBytes(source.file);
  auto bytes = ReadFileRange(source.file, source.offset, entry.size);
  if (bytes && bytes->size() != entry.size)
    return Fail(fmt::format("{}: {} bytes at offset {:#x} expected, {} read", source.file,
                            entry.size, source.offset, bytes->size()));
  return bytes;
}

Status WriteFile(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) return Fail(path + ": cannot write the extracted image");
  return {};
}

}  // namespace

Status WriteSessionArchive(const Session& session, const std::string& output,
                           const ArchiveWriteOptions& options) {
  auto writer = archive::ArchiveWriter::Create(output, options.force);
  if (!writer) return tl::unexpected(writer.error());
  archive::Manifest manifest = session.manifest;
  manifest.tool = options.tool;
  manifest.created = archive::UtcNow();
  for (size_t i = 0; i < manifest.streams.size(); ++i) {
    archive::StreamEntry& stream = manifest.streams[i];
    stream.member = "streams/" + SafeBaseName(stream.name) + ".pt";
    if (auto st = writer->Add(stream.member, session.stream_bytes[i]); !st) return st;
  }
  // Images are stored once per content, whatever their path or how often they are loaded.
  std::map<std::string, std::string> member_of_digest;
  for (size_t i = 0; i < manifest.images.size(); ++i) {
    archive::ImageEntry& image = manifest.images[i];
    auto bytes = ImageBytes(image, session.image_sources[i]);
    if (!bytes) return tl::unexpected(bytes.error());
    const std::string digest = archive::DigestHex(archive::Sha256::Of(*bytes));
    image.member_offset = 0;  // a raw image is stored as its own byte range
    auto known = member_of_digest.find(digest);
    if (known != member_of_digest.end()) {
      image.member = known->second;
      continue;
    }
    image.member = "images/" + digest.substr(0, 16) + "/" + SafeBaseName(image.path);
    member_of_digest[digest] = image.member;
    if (auto st = writer->Add(image.member, *bytes); !st) return st;
  }
  for (size_t i = 0; i < manifest.sideband.size(); ++i) {
    archive::SidebandEntry& sideband = manifest.sideband[i];
    sideband.member = "sideband/" + SafeBaseName(sideband.name.empty() ? sideband.kind
                                                                        : sideband.name);
    if (auto st = writer->Add(sideband.member, session.sideband_bytes[i]); !st) return st;
  }
  return writer->Finish(archive::ManifestToJson(manifest));
}

Result<Session> OpenArchiveSession(const std::string& path) {
  auto reader = archive::ArchiveReader::Open(path);
  if (!reader) return tl::unexpected(reader.error());
  auto manifest = archive::ManifestFromJson(reader->manifest());
  if (!manifest) return Fail(path + ": offset 0x0: manifest: " + manifest.error().message);
  if (auto st = archive::CheckMembersExist(*manifest, reader->members()); !st)
    return Fail(path + ": offset 0x0: manifest: " + st.error().message);
  Session session;
  // The private directory for images and large streams, made when first needed.
  auto private_dir = [&]() -> Result<std::string> {
    if (!session.extracted) {
      auto extracted = ExtractedFiles::Create();
      if (!extracted) return tl::unexpected(extracted.error());
      session.extracted = *extracted;
    }
    return session.extracted->dir();
  };
  // What each member is for. A member only streams use is decompressed to a file and mapped when
  // large, else into huge-page memory; a member only images use goes straight to a file in the
  // private directory (checked as it is written), which ImageSet maps: the code never passes
  // through the heap. A member with other uses is read into memory.
  enum Role : unsigned { kStreamRole = 1, kSidebandRole = 2, kImageRole = 4 };
  std::map<std::string, unsigned> roles;
  for (const auto& stream : manifest->streams) roles[stream.member] |= kStreamRole;
  for (const auto& sideband : manifest->sideband) roles[sideband.member] |= kSidebandRole;
  for (const auto& image : manifest->images) roles[image.member] |= kImageRole;
  const uint64_t map_from = MapStreamsFrom();
  // Where each member goes, decided in the archive's order (the private files numbered so), then
  // read on the decode's threads at once (src/pipeline/member_reads.h). Every member is checked,
  // also those this version of ptprof does not use.
  std::vector<MemberRead> reads;
  size_t image_files = 0, stream_members = 0;
  for (const archive::MemberInfo& member : reader->members()) {
    MemberRead& read = reads.emplace_back();
    read.member = &member;
    const auto role = roles.find(member.name);
    const unsigned only = role == roles.end() ? 0 : role->second;
    if (only == kImageRole || (only == kStreamRole && member.size >= map_from && member.size > 0)) {
      auto dir = private_dir();
      if (!dir) return tl::unexpected(dir.error());
      if (only == kImageRole) {
        read.to = MemberRead::To::kFile;
        read.file = fmt::format("{}/{}-{}", *dir, ++image_files, SafeBaseName(member.name));
      } else {
        read.to = MemberRead::To::kMappedFile;
        read.file =
            fmt::format("{}/stream{}-{}", *dir, stream_members++, SafeBaseName(member.name));
      }
    } else if (only == kStreamRole) {
      read.to = MemberRead::To::kShared;
      ++stream_members;
    }
  }
  if (auto st = ReadMembers(*reader, reads, DefaultDecodeJobs()); !st)
    return tl::unexpected(st.error());
  std::map<std::string, SharedBytes> streams;  // of the members only streams use
  std::map<std::string, std::string> file_of_member;
  std::map<std::string, uint64_t> size_of_member;
  std::map<std::string, std::vector<uint8_t>> contents;
  for (MemberRead& read : reads) {
    size_of_member[read.member->name] = read.member->size;
    switch (read.to) {
      case MemberRead::To::kFile:
        file_of_member[read.member->name] = read.file;
        break;
      case MemberRead::To::kMappedFile:
      case MemberRead::To::kShared:
        streams[read.member->name] = std::move(read.shared);
        break;
      case MemberRead::To::kMemory:
        contents[read.member->name] = std::move(read.bytes);
        break;
    }
  }

  session.input = path;
  session.kind = InputKind::kPtar;
  session.manifest = std::move(*manifest);
  // Trace bytes can be large: a member is moved into the session at its last use, copied before.
  std::map<std::string, size_t> uses;
  for (const auto& stream : session.manifest.streams) ++uses[stream.member];
  for (const auto& sideband : session.manifest.sideband) ++uses[sideband.member];
  for (const auto& image : session.manifest.images) ++uses[image.member];
  auto take = [&](const std::string& member) {
    return --uses[member] == 0 ? std::move(contents[member]) : contents[member];
  };
  for (const archive::StreamEntry& stream : session.manifest.streams) {
    if (auto it = streams.find(stream.member); it != streams.end())
      session.stream_bytes.push_back(it->second);
    else
      session.stream_bytes.push_back(SharedBytes(take(stream.member)));
  }
  for (const archive::SidebandEntry& sideband : session.manifest.sideband)
    session.sideband_bytes.push_back(take(sideband.member));
  // A copy of /proc/kallsyms symbolises kernel addresses (a recording of a whole system).
  for (size_t i = 0; i < session.manifest.sideband.size(); ++i) {
    const archive::SidebandEntry& sideband = session.manifest.sideband[i];
    if (sideband.kind != "kallsyms") continue;
    const std::vector<uint8_t>& bytes = session.sideband_bytes[i];
    auto entries = ParseKallsyms(
        std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()),
        path + ": sideband member '" + sideband.member + "'");
    if (!entries) {
      session.warnings.push_back(entries.error().message);
      continue;
    }
    for (Symbol& symbol : KallsymsTextSymbols(*entries)) session.images.AddSymbol(std::move(symbol));
  }
  if (session.manifest.images.empty()) return session;

  auto dir = private_dir();
  if (!dir) return tl::unexpected(dir.error());
  for (size_t i = 0; i < session.manifest.images.size(); ++i) {
    const archive::ImageEntry& image = session.manifest.images[i];
    std::string& file = file_of_member[image.member];
    if (file.empty()) {  // a member that a stream or the sideband uses too, read above
      file = fmt::format("{}/{}-{}", *dir, file_of_member.size(),
                         SafeBaseName(image.member));
      if (auto st = WriteFile(file, contents[image.member]); !st) return tl::unexpected(st.error());
    }
    const std::string where = fmt::format("{}: image {} ('{}', member '{}')", path, i,
                                          image.path, image.member);
    Status status;
    if (image.kind == archive::ImageEntry::Kind::kElf) {
      status = session.images.AddElf(ElfImageSpec{file, image.base});
    } else {
      const uint64_t member_size = size_of_member[image.member];
      if (image.member_offset > member_size || image.size > member_size - image.member_offset ||
          image.size == 0)
        return Fail(fmt::format("{}: {} bytes at member offset {:#x} are not inside the member "
                                "({} bytes)", where, image.size, image.member_offset, member_size));
      status = session.images.AddRaw(
          RawImageSpec{file, image.member_offset, image.size, image.address});
    }
    if (!status) return Fail(where + ": " + status.error().message);
    session.image_sources.push_back({file, image.member_offset});
  }
  return session;
}

}  // namespace ptprof
