#include "sideband/shared_bytes.h"

#include <algorithm>
#include <cassert>
#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>


namespace ptprof {

namespace {

// Unmaps on destruction; shared by every slice of the mapping.
struct Mapping {
  void* address = nullptr;
  size_t length = 0;
  ~Mapping() {
    if (address) munmap(address, length);
  }
};

// Nothing to map (a pipe, a device, an empty file): what the descriptor gives up to its end.
// Takes `fd`.
Result<SharedBytes> ReadToEnd(int fd, const std::string& path) {
  std::vector<uint8_t> bytes;
  size_t used = 0;
  for (;;) {
    if (bytes.size() - used < 65536) bytes.resize(std::max<size_t>(bytes.size() * 2, 1 << 20));
    const ssize_t n = read(fd, bytes.data() + used, bytes.size() - used);
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      const int error = errno;
      close(fd);
      return Fail(path + ": read error at offset " + std::to_string(used) + ": " +
                  std::strerror(error));
    }
    used += static_cast<size_t>(n);
  }
  close(fd);
  bytes.resize(used);
  bytes.shrink_to_fit();
  return SharedBytes(std::move(bytes));
}

}  // namespace

SharedBytes::SharedBytes(std::vector<uint8_t> owned) {
  auto buffer = std::make_shared<std::vector<uint8_t>>(std::move(owned));
  data_ = buffer->data();
  size_ = buffer->size();
  owner_ = std::move(buffer);
}

Result<SharedBytes> SharedBytes::MapFile(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Fail(path + ": cannot open: " + std::strerror(errno));
  struct stat st {};
  if (fstat(fd, &st) != 0) {
    const int error = errno;
    close(fd);
    return Fail(path + ": cannot stat: " + std::strerror(error));
  }
  if (S_ISDIR(st.st_mode)) {
    close(fd);
    return Fail(path + ": is a directory, expected a file");
  }
  if (!S_ISREG(st.st_mode) || st.st_size == 0) return ReadToEnd(fd, path);
  auto mapping = std::make_shared<Mapping>();
  mapping->length = static_cast<size_t>(st.st_size);
  mapping->address = mmap(nullptr, mapping->length, PROT_READ, MAP_PRIVATE, fd, 0);
  if (mapping->address == MAP_FAILED) {
    mapping->address = nullptr;
    return ReadToEnd(fd, path);  // some file systems cannot map
  }
  close(fd);  // the mapping keeps the file
  // Decoders read a trace front to back: let the kernel read ahead and drop pages behind.
  madvise(mapping->address, mapping->length, MADV_SEQUENTIAL);
  SharedBytes out;
  out.data_ = static_cast<const uint8_t*>(mapping->address);
  out.size_ = mapping->length;
  out.mapped_ = true;
  out.owner_ = std::move(mapping);
  return out;
}

SharedBytes SharedBytes::Slice(uint64_t offset, uint64_t size) const {
  assert(offset <= size_ && size <= size_ - offset);
  SharedBytes out = *this;
  out.data_ = data_ + offset;
  out.size_ = static_cast<size_t>(size);
  return out;
}

bool operator==(const SharedBytes& a, const SharedBytes& b) {
  return a.size_ == b.size_ && std::equal(a.begin(), a.end(), b.begin());
}

bool operator==(const SharedBytes& a, const std::vector<uint8_t>& b) {
  return a.size_ == b.size() && std::equal(a.begin(), a.end(), b.begin());
}

}  // namespace ptprof
