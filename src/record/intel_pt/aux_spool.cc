#include "src/record/intel_pt/aux_spool.h"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace ptprof::record::hw {

Result<AuxSpool> AuxSpool::Create() {
  const char* tmp = std::getenv("TMPDIR");
  std::string path = std::string(tmp && *tmp ? tmp : "/tmp") + "/ptprof-aux-XXXXXX";
  const int fd = mkstemp(path.data());
  if (fd < 0) return Fail(path + ": cannot create the spool for the trace: " + std::strerror(errno));
  unlink(path.c_str());  // the descriptor keeps the file
  AuxSpool spool;
  spool.file_ = fdopen(fd, "w+b");
  if (!spool.file_) {
    close(fd);
    return Fail("the trace spool: fdopen: " + std::string(std::strerror(errno)));
  }
  return spool;
}

AuxSpool::AuxSpool(AuxSpool&& other) noexcept : file_(other.file_), size_(other.size_) {
  other.file_ = nullptr;
  other.size_ = 0;
}

AuxSpool& AuxSpool::operator=(AuxSpool&& other) noexcept {
  if (this != &other) {
    if (file_) std::fclose(file_);
    file_ = other.file_;
    size_ = other.size_;
    other.file_ = nullptr;
    other.size_ = 0;
  }
  return *this;
}

AuxSpool::~AuxSpool() {
  if (file_) std::fclose(file_);
}

Status AuxSpool::Append(std::span<const uint8_t> bytes) {
  if (!file_) return Fail("the trace spool is closed");
  if (!bytes.empty() && std::fwrite(bytes.data(), 1, bytes.size(), file_) != bytes.size())
    return Fail("the trace spool (under TMPDIR): write error at offset " + std::to_string(size_) +
                ": " + std::strerror(errno));
  size_ += bytes.size();
  return {};
}

Result<SharedBytes> AuxSpool::Finish() {
  if (!file_) return Fail("the trace spool is closed");
  if (std::fflush(file_) != 0)
    return Fail("the trace spool (under TMPDIR): write error: " + std::string(std::strerror(errno)));
  // The file has no name: map it through the descriptor's /proc entry.
  auto bytes = SharedBytes::MapFile("/proc/self/fd/" + std::to_string(fileno(file_)));
  std::fclose(file_);
  file_ = nullptr;
  if (!bytes) return tl::unexpected(bytes.error());
  return bytes;
}

}  // namespace ptprof::record::hw
