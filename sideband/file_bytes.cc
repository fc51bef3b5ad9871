#include "sideband/file_bytes.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

#include <sys/stat.h>

namespace ptprof {

namespace {
struct FileCloser {
  void operator()(FILE* f) const { std::fclose(f); }
};
}  // namespace

Result<std::vector<uint8_t>> ReadFileRange(const std::string& path, uint64_t offset, uint64_t size) {
  std::unique_ptr<FILE, FileCloser> file(std::fopen(path.c_str(), "rb"));
  if (!file) return Fail(path + ": cannot open: " + std::strerror(errno));
  struct stat st {};
  if (fstat(fileno(file.get()), &st) != 0) return Fail(path + ": cannot stat: " + std::strerror(errno));
  if (S_ISDIR(st.st_mode)) return Fail(path + ": is a directory, expected a file");
  uint64_t file_size = static_cast<uint64_t>(st.st_size);
  if (offset > file_size)
    return Fail(path + ": offset 0x" + [&] {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%llx", static_cast<unsigned long long>(offset));
      return std::string(buf);
    }() + " is past the end of the file (" + std::to_string(file_size) + " bytes)");
  uint64_t available = file_size - offset;
  uint64_t want = size == UINT64_MAX ? available : size;
  if (want > available)
    return Fail(path + ": wanted " + std::to_string(want) + " bytes at offset " +
                std::to_string(offset) + " but the file has " + std::to_string(file_size));
  std::vector<uint8_t> bytes(want);
  if (offset != 0 && std::fseek(file.get(), static_cast<long>(offset), SEEK_SET) != 0)
    return Fail(path + ": cannot seek to offset " + std::to_string(offset));
  if (want != 0 && std::fread(bytes.data(), 1, want, file.get()) != want)
    return Fail(path + ": read error at offset " + std::to_string(offset));
  return bytes;
}

Result<std::vector<uint8_t>> ReadFileBytes(const std::string& path) {
  return ReadFileRange(path, 0, UINT64_MAX);
}

}  // namespace ptprof
