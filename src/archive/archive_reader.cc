#include "src/archive/archive_reader.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <set>
#include <system_error>

#include <zstd.h>

#include <fmt/format.h>

#include "src/archive/side_digest.h"


namespace ptprof::archive {

namespace {

// Reads a JSON number that must be a non-negative integer.
bool GetU64(const nlohmann::ordered_json& object, const char* key, uint64_t& out) {
  auto it = object.find(key);
  if (it == object.end() || !it->is_number_unsigned()) return false;
  out = it->get<uint64_t>();
  return true;
}

}  // namespace

Status DecompressFrameTo(std::span<const uint8_t> frame, uint64_t limit,
                        const std::function<Status(std::span<const uint8_t>)>& consume,
                        size_t chunk, PieceBuffers* buffers) {
  const unsigned long long declared = ZSTD_getFrameContentSize(frame.data(), frame.size());
  if (declared == ZSTD_CONTENTSIZE_ERROR) return Fail("not a zstd frame");
  if (declared != ZSTD_CONTENTSIZE_UNKNOWN && declared > limit)
    return Fail(fmt::format("the frame says {} bytes, {} expected", declared, limit));
  std::unique_ptr<ZSTD_DCtx, size_t (*)(ZSTD_DCtx*)> dctx(ZSTD_createDCtx(), ZSTD_freeDCtx);
  if (!dctx) return Fail("out of memory for the zstd decompressor");
  // One chunk at a time: the output grows with what the frame really produces, never with what a
  // size field claims, and a large member never has to fit in memory.
  // Two of them, taken in turn: a piece handed on stays as it is while the next is produced.
  PieceBuffers own;
  if (!buffers) buffers = &own;
  int turn = 0;
  ZSTD_inBuffer in{frame.data(), frame.size(), 0};
  uint64_t produced = 0;
  size_t status = 1;
  while (status != 0) {
    std::vector<uint8_t>& buffer = buffers->turn[turn];
    turn ^= 1;
    // The size the frame states, when smaller: a small member takes no large buffer.
    if (buffer.empty()) buffer.resize(std::max<size_t>(1, std::min<uint64_t>(chunk, declared)));
    ZSTD_outBuffer out{buffer.data(), buffer.size(), 0};
    status = ZSTD_decompressStream(dctx.get(), &out, &in);
    if (ZSTD_isError(status)) return Fail(std::string("zstd: ") + ZSTD_getErrorName(status));
    produced += out.pos;
    if (produced > limit)
      return Fail(fmt::format("the frame holds more than the {} bytes expected", limit));
    if (out.pos != 0) {
      if (auto st = consume(std::span<const uint8_t>(buffer.data(), out.pos)); !st) return st;
    }
    if (status != 0 && in.pos == in.size && out.pos < out.size)
      return Fail("the frame is cut short");
  }
  if (in.pos != in.size) return Fail("bytes after the end of the frame");
  return {};
}

Result<std::vector<uint8_t>> DecompressFrame(std::span<const uint8_t> frame, uint64_t limit) {
  std::vector<uint8_t> out;
  auto status = DecompressFrameTo(frame, limit, [&](std::span<const uint8_t> piece) -> Status {
    out.insert(out.end(), piece.begin(), piece.end());
    return {};
  });
  if (!status) return tl::unexpected(status.error());
  return out;
}

Result<ArchiveReader> ArchiveReader::Open(const std::string& path) {
  auto bytes = SharedBytes::MapFile(path);
  if (!bytes) return tl::unexpected(bytes.error());
  return FromBytes(path, std::move(*bytes));
}

Result<ArchiveReader> ArchiveReader::FromBytes(std::string label, std::vector<uint8_t> bytes) {
  return FromBytes(std::move(label), SharedBytes(std::move(bytes)));
}

Result<ArchiveReader> ArchiveReader::FromBytes(std::string label, SharedBytes bytes) {
  ArchiveReader reader;
  reader.label_ = std::move(label);
  reader.bytes_ = std::move(bytes);
  if (auto st = reader.ParseLayout(); !st) return tl::unexpected(st.error());
  return reader;
}

std::string ArchiveReader::Where(uint64_t offset, std::string_view member) const {
  return fmt::format("{}: offset {:#x}: member '{}'", label_, offset, member);
}

Status ArchiveReader::ParseLayout() {
  if (bytes_.empty()) return Fail(label_ + ": offset 0x0: empty file");
  const size_t first_size = ZSTD_findFrameCompressedSize(bytes_.data(), bytes_.size());
  if (ZSTD_isError(first_size))
    return Fail(fmt::format("{}: not a zstd frame ({})", Where(0, "manifest"),
                            ZSTD_getErrorName(first_size)));
  auto first = DecompressFrame(std::span<const uint8_t>(bytes_.data(), first_size),
                               kHeaderSize + 4096 + kMaxManifestSize);
  if (!first) return Fail(Where(0, "manifest") + ": " + first.error().message);
  auto header = DecodeHeader(*first);
  if (!header) return Fail(label_ + ": manifest frame: " + header.error().message);
  header_ = *header;
  if (first->size() != header_.header_size + header_.manifest_size)
    return Fail(fmt::format("{}: the header frame holds {} bytes, the header says {}",
                            Where(0, "manifest"), first->size(),
                            header_.header_size + header_.manifest_size));
  const std::span<const uint8_t> text(first->data() + header_.header_size, header_.manifest_size);
  if (Sha256::Of(text) != header_.manifest_sha256)
    return Fail(Where(0, "manifest") + ": checksum mismatch (the manifest is damaged)");
  manifest_ = nlohmann::ordered_json::parse(text.begin(), text.end(), nullptr, false);
  if (manifest_.is_discarded() || !manifest_.is_object())
    return Fail(Where(0, "manifest") + ": not a JSON object");
  return ParseMembersTable(first_size);
}

Status ArchiveReader::ParseMembersTable(uint64_t offset) {
  auto table = manifest_.find("members");
  if (table == manifest_.end() || !table->is_array())
    return Fail(Where(0, "manifest") + ": field 'members': expected an array");
  std::set<std::string> names;
  for (size_t i = 0; i < table->size(); ++i) {
    const auto& entry = (*table)[i];
    const std::string field = fmt::format("field 'members[{}]", i);
    MemberInfo member;
    if (!entry.is_object() || !entry.contains("name") || !entry["name"].is_string())
      return Fail(fmt::format("{}: {}.name': expected a string", Where(0, "manifest"), field));
    member.name = entry["name"].get<std::string>();
    if (auto st = CheckMemberName(member.name); !st)
      return Fail(fmt::format("{}: {}.name': {}", Where(0, "manifest"), field,
                              st.error().message));
    if (!names.insert(member.name).second)
      return Fail(fmt::format("{}: {}.name': '{}' appears twice", Where(0, "manifest"), field,
                              member.name));
    if (!GetU64(entry, "size", member.size) || !GetU64(entry, "packed_size", member.packed_size))
      return Fail(fmt::format("{}: {}.size' and 'packed_size' must be unsigned integers",
                              Where(0, "manifest"), field));
    if (!entry.contains("sha256") || !entry["sha256"].is_string() ||
        !ParseDigest(entry["sha256"].get<std::string>(), member.sha256))
      return Fail(fmt::format("{}: {}.sha256': expected 64 lower-case hex digits",
                              Where(0, "manifest"), field));
    member.offset = offset;
    if (member.packed_size > bytes_.size() - std::min<uint64_t>(offset, bytes_.size()))
      return Fail(fmt::format("{}: truncated: its {} bytes would end at offset {:#x}, the file "
                              "ends at {:#x}",
                              Where(offset, member.name), member.packed_size,
                              offset + member.packed_size, bytes_.size()));
    const size_t frame_size =
        ZSTD_findFrameCompressedSize(bytes_.data() + offset, member.packed_size);
    if (ZSTD_isError(frame_size) || frame_size != member.packed_size)
      return Fail(fmt::format("{}: damaged: no zstd frame of {} bytes here", Where(offset, member.name),
                              member.packed_size));
    const unsigned long long content =
        ZSTD_getFrameContentSize(bytes_.data() + offset, member.packed_size);
    if (content != member.size)
      return Fail(fmt::format("{}: damaged: its frame says {} bytes, the manifest {}",
                              Where(offset, member.name),
                              content == ZSTD_CONTENTSIZE_UNKNOWN ||
                                      content == ZSTD_CONTENTSIZE_ERROR
                                  ? std::string("no")
                                  : std::to_string(content),
                              member.size));
    offset += member.packed_size;
    members_.push_back(std::move(member));
  }
  if (offset != bytes_.size())
    return Fail(fmt::format("{}: offset {:#x}: {} bytes after the last member", label_, offset,
                            bytes_.size() - offset));
  return {};
}

const MemberInfo* ArchiveReader::Find(std::string_view name) const {
  for (const MemberInfo& member : members_)
    if (member.name == name) return &member;
  return nullptr;
}

Result<std::vector<uint8_t>> ArchiveReader::Read(std::string_view name) const {
  const MemberInfo* member = Find(name);
  if (!member) return Fail(fmt::format("{}: member '{}' is not in the archive", label_, name));
  return Read(*member);
}

Status ArchiveReader::ReadMember(const MemberInfo& member,
                                 const std::function<Status(std::span<const uint8_t>)>& consume) const {
  // A large member's digest is taken beside its decompression, in larger pieces (fewer hand-overs).
  Sha256 digest;
  PieceBuffers buffers;  // outlives `side`, which may still be reading the last piece
  std::optional<SideDigest> side;
  if (SideDigest::Worthwhile(member.size)) {
    try {
      side.emplace();
    } catch (const std::system_error&) {
      // No thread to be had (a limit on threads or on memory): digested here, as a small one.
    }
  }
  uint64_t produced = 0;
  bool consumer_failed = false;
  auto status = DecompressFrameTo(
      std::span<const uint8_t>(bytes_.data() + member.offset, member.packed_size), member.size,
      [&](std::span<const uint8_t> piece) -> Status {
        if (side)
          side->Add(piece);
        else
          digest.Update(piece);
        produced += piece.size();
        auto st = consume(piece);
        consumer_failed = !st;
        return st;
      },
      side ? size_t{1} << 20 : kPieceBytes, &buffers);
  if (!status) {
    if (consumer_failed) return status;  // the consumer's own error (a full disk), as it is
    return Fail(Where(member.offset, member.name) + ": damaged: " + status.error().message);
  }
  if (produced != member.size)
    return Fail(fmt::format("{}: damaged: {} bytes, the manifest says {}",
                            Where(member.offset, member.name), produced, member.size));
  if ((side ? side->Finish() : digest.Finish()) != member.sha256)
    return Fail(Where(member.offset, member.name) + ": checksum mismatch (the member is damaged)");
  return {};
}

Result<std::vector<uint8_t>> ArchiveReader::Read(const MemberInfo& member) const {
  std::vector<uint8_t> bytes;
  // The size the manifest states, so the bytes are not copied as the vector grows (at most
  // 1 GiB up front: a damaged manifest may state anything; the decompression checks the size).
  bytes.reserve(static_cast<size_t>(std::min<uint64_t>(member.size, uint64_t{1} << 30)));
  auto status = ReadMember(member, [&](std::span<const uint8_t> piece) -> Status {
    bytes.insert(bytes.end(), piece.begin(), piece.end());
    return {};
  });
  if (!status) return tl::unexpected(status.error());
  return bytes;
}

Result<SharedBytes> ArchiveReader::ReadShared(const MemberInfo& member) const {
  // A damaged manifest may state any size: past 1 GiB the bytes grow as they come instead.
  if (member.size > (uint64_t{1} << 30)) {
    auto bytes = Read(member);
    if (!bytes) return tl::unexpected(bytes.error());
    return SharedBytes(std::move(*bytes));
  }
  const size_t size = static_cast<size_t>(member.size);
  bool filling = false;  // the filler ran: an error before it is the buffer's, not the member's
  auto shared = SharedBytes::Filled(size, [&](uint8_t* out) -> Status {
    filling = true;
    size_t at = 0;
    return ReadMember(member, [&](std::span<const uint8_t> piece) -> Status {
      if (piece.size() > size - at)  // DecompressFrameTo stops at the size; checked all the same
        return Fail(Where(member.offset, member.name) + ": damaged: more bytes than the manifest says");
      std::memcpy(out + at, piece.data(), piece.size());
      at += piece.size();
      return {};
    });
  });
  if (!shared && !filling)
    return Fail(Where(member.offset, member.name) + ": cannot hold it in memory: " +
                shared.error().message);
  return shared;
}

Status ArchiveReader::ReadToFile(const MemberInfo& member, const std::string& path) const {
  std::unique_ptr<FILE, int (*)(FILE*)> file(std::fopen(path.c_str(), "wb"), std::fclose);
  if (!file) return Fail(path + ": cannot create: " + std::strerror(errno));
  uint64_t written = 0;
  auto status = ReadMember(member, [&](std::span<const uint8_t> piece) -> Status {
    if (std::fwrite(piece.data(), 1, piece.size(), file.get()) != piece.size())
      return Fail(path + ": write error at offset " + std::to_string(written) + ": " +
                  std::strerror(errno));
    written += piece.size();
    return {};
  });
  if (!status) return status;
  if (std::fflush(file.get()) != 0) return Fail(path + ": write error: " + std::strerror(errno));
  return {};
}

Status ArchiveReader::VerifyAll() const {
  // Each member decompressed and hashed piece by piece, nothing kept: a buffer for the whole
  // member would be fresh memory faulted in only to be thrown away.
  for (const MemberInfo& member : members_)
    if (auto st = ReadMember(member, [](std::span<const uint8_t>) -> Status { return {}; }); !st)
      return st;
  return {};
}

}  // namespace ptprof::archive
