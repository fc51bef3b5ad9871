#include "src/archive/archive_writer.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include <fmt/format.h>

namespace ptprof::archive {

namespace {

bool Exists(const std::string& path) {
  struct stat st {};
  return lstat(path.c_str(), &st) == 0;
}

std::string ExistsMessage(const std::string& path) {
  return path + ": already exists (use --force to replace it)";
}

Status WriteAll(int fd, std::span<const uint8_t> bytes, const std::string& path) {
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Fail(path + ": cannot write: " + std::strerror(errno));
    done += static_cast<size_t>(n);
  }
  return {};
}

// Moves `temp` to `path`; without `force` only if `path` does not exist (atomically where the
// file system supports RENAME_NOREPLACE, else with link + unlink, which is atomic too).
Status MoveIntoPlace(const std::string& temp, const std::string& path, bool force) {
  if (force) {
    if (std::rename(temp.c_str(), path.c_str()) != 0)
      return Fail(path + ": cannot rename the temporary file into place: " + std::strerror(errno));
    return {};
  }
  if (renameat2(AT_FDCWD, temp.c_str(), AT_FDCWD, path.c_str(), RENAME_NOREPLACE) == 0) return {};
  if (errno == EEXIST) return Fail(ExistsMessage(path));
  if (errno != EINVAL && errno != ENOSYS)
    return Fail(path + ": cannot rename the temporary file into place: " + std::strerror(errno));
  if (link(temp.c_str(), path.c_str()) != 0) {
    if (errno == EEXIST) return Fail(ExistsMessage(path));
    return Fail(path + ": cannot move the temporary file into place: " + std::strerror(errno));
  }
  unlink(temp.c_str());
  return {};
}

}  // namespace

Result<std::vector<uint8_t>> CompressFrame(std::span<const uint8_t> bytes) {
  ZSTD_CCtx* cctx = ZSTD_createCCtx();
  if (!cctx) return Fail("out of memory for the zstd compressor");
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, kCompressionLevel);
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 1);
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_contentSizeFlag, 1);
  std::vector<uint8_t> frame(ZSTD_compressBound(bytes.size()));
  const size_t size =
      ZSTD_compress2(cctx, frame.data(), frame.size(), bytes.data(), bytes.size());
  ZSTD_freeCCtx(cctx);
  if (ZSTD_isError(size)) return Fail(std::string("zstd: ") + ZSTD_getErrorName(size));
  frame.resize(size);
  return frame;
}

Result<ArchiveWriter> ArchiveWriter::Create(std::string path, bool force) {
  if (path.empty()) return Fail("the output path is empty");
  if (!force && Exists(path)) return Fail(ExistsMessage(path));
  return ArchiveWriter(std::move(path), force);
}

bool ArchiveWriter::Has(std::string_view name) const {
  for (const Packed& member : members_)
    if (member.info.name == name) return true;
  return false;
}

Status ArchiveWriter::Add(std::string name, std::span<const uint8_t> bytes) {
  if (auto st = CheckMemberName(name); !st) return Fail(path_ + ": " + st.error().message);
  if (Has(name)) return Fail(fmt::format("{}: member '{}' added twice", path_, name));
  auto frame = CompressFrame(bytes);
  if (!frame) return Fail(fmt::format("{}: member '{}': {}", path_, name, frame.error().message));
  Packed packed;
  packed.info.name = std::move(name);
  packed.info.size = bytes.size();
  packed.info.packed_size = frame->size();
  packed.info.sha256 = Sha256::Of(bytes);
  packed.frame = std::move(*frame);
  members_.push_back(std::move(packed));
  return {};
}

Status ArchiveWriter::Finish(nlohmann::ordered_json fields) {
  // The container's own fields come first, so that the start of the manifest says what it is.
  nlohmann::ordered_json manifest = {{"format", "ptar"}, {"format_version", kFormatVersion}};
  if (fields.is_object())
    for (auto it = fields.begin(); it != fields.end(); ++it)
      if (it.key() != "format" && it.key() != "format_version" && it.key() != "members")
        manifest[it.key()] = it.value();
  nlohmann::ordered_json table = nlohmann::ordered_json::array();
  for (const Packed& member : members_)
    table.push_back({{"name", member.info.name},
                     {"size", member.info.size},
                     {"packed_size", member.info.packed_size},
                     {"sha256", DigestHex(member.info.sha256)}});
  manifest["members"] = std::move(table);
  const std::string text = manifest.dump(1) + "\n";
  const std::span<const uint8_t> text_bytes(reinterpret_cast<const uint8_t*>(text.data()),
                                            text.size());
  if (text.size() > kMaxManifestSize)
    return Fail(fmt::format("{}: the manifest is {} bytes, more than the {} a reader accepts",
                            path_, text.size(), kMaxManifestSize));
  PtarHeader header;
  header.manifest_size = text.size();
  header.manifest_sha256 = Sha256::Of(text_bytes);
  std::vector<uint8_t> first = EncodeHeader(header);
  first.insert(first.end(), text.begin(), text.end());
  auto first_frame = CompressFrame(first);
  if (!first_frame) return Fail(path_ + ": manifest: " + first_frame.error().message);

  if (!force_ && Exists(path_)) return Fail(ExistsMessage(path_));
  std::string temp = path_ + ".tmp-XXXXXX";
  const int fd = mkstemp(temp.data());
  if (fd < 0) return Fail(path_ + ": cannot create a temporary file beside it: " +
                          std::strerror(errno));
  Status status = WriteAll(fd, *first_frame, temp);
  for (size_t i = 0; status && i < members_.size(); ++i)
    status = WriteAll(fd, members_[i].frame, temp);
  if (status && fsync(fd) != 0) status = Fail(temp + ": cannot sync: " + std::strerror(errno));
  // mkstemp creates the file 0600; an archive is an ordinary output file.
  if (status) {
    const mode_t mask = umask(0);
    umask(mask);
    fchmod(fd, 0666 & ~mask);
  }
  if (close(fd) != 0 && status) status = Fail(temp + ": cannot close: " + std::strerror(errno));
  if (status) status = MoveIntoPlace(temp, path_, force_);
  if (!status) unlink(temp.c_str());
  return status;
}

}  // namespace ptprof::archive
