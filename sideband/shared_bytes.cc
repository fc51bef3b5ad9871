#include "sideband/shared_bytes.h"

#include "src/model/huge_slabs.h"

#include <algorithm>
#include <atomic>
#include <cassert>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <mutex>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>


namespace ptprof {

namespace {

// A file that shrinks while it is mapped (perf still writing it, a trace overwritten) makes a read
// past its new end raise SIGBUS. The mapped files are registered here so that the handler can say
// which file it was and where, in one line, and exit 1 like any other bad input instead of
// crashing. Fixed slots, no allocation: the handler only reads them.
struct MappedSlot {
  std::atomic<bool> used{false};
  const uint8_t* begin = nullptr;
  const uint8_t* end = nullptr;
  char path[512] = {};
};
constexpr size_t kSlots = 64;
MappedSlot slots[kSlots];

void WriteAll(const char* text, size_t size) {
  while (size > 0) {
    const ssize_t n = write(STDERR_FILENO, text, size);
    if (n <= 0) return;
    text += n;
    size -= static_cast<size_t>(n);
  }
}

void OnBusError(int signal, siginfo_t* info, void*) {
  const auto* at = static_cast<const uint8_t*>(info->si_addr);
  for (MappedSlot& slot : slots) {
    if (!slot.used.load(std::memory_order_acquire) || at < slot.begin || at >= slot.end) continue;
    char hex[19] = "0x";
    const uint64_t offset = static_cast<uint64_t>(at - slot.begin);
    int digits = 1;
    while (digits < 16 && (offset >> (4 * digits)) != 0) ++digits;
    for (int i = 0; i < digits; ++i)
      hex[2 + i] = "0123456789abcdef"[(offset >> (4 * (digits - 1 - i))) & 0xf];
    hex[2 + digits] = '\0';
    const char* parts[] = {"ptprof: ", slot.path, ": offset ", hex,
                           ": the file was truncated while it was being read\n"};
    for (const char* part : parts) WriteAll(part, std::strlen(part));
    _exit(1);
  }
  // Not one of ours: what the signal would have done without this handler.
  std::signal(signal, SIG_DFL);
  raise(signal);
}

MappedSlot* RegisterMapping(const void* address, size_t length, const std::string& path) {
  static std::mutex mutex;
  std::lock_guard<std::mutex> lock(mutex);
  // (Again) when someone else's handler took SIGBUS since: a test framework's, for one.
  struct sigaction current {};
  if (sigaction(SIGBUS, nullptr, &current) == 0 && current.sa_sigaction != OnBusError) {
    struct sigaction action {};
    action.sa_sigaction = OnBusError;
    action.sa_flags = SA_SIGINFO;
    sigemptyset(&action.sa_mask);
    sigaction(SIGBUS, &action, nullptr);
  }
  for (MappedSlot& slot : slots) {
    if (slot.used.load(std::memory_order_relaxed)) continue;
    slot.begin = static_cast<const uint8_t*>(address);
    slot.end = slot.begin + length;
    std::snprintf(slot.path, sizeof slot.path, "%s", path.c_str());
    slot.used.store(true, std::memory_order_release);
    return &slot;
  }
  return nullptr;  // more files mapped at once than slots: a truncation then crashes plainly
}

// Unmaps on destruction; shared by every slice of the mapping.
struct Mapping {
  void* address = nullptr;
  size_t length = 0;
  MappedSlot* slot = nullptr;
  ~Mapping() {
    if (slot) slot->used.store(false, std::memory_order_release);
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

Result<SharedBytes> SharedBytes::Filled(size_t size,
                                        const std::function<Status(uint8_t* out)>& fill) {
  if (size == 0 || HugeSlabs::PiecesOnTheHeap()) {
    std::vector<uint8_t> bytes(size);
    if (auto st = fill(bytes.data()); !st) return tl::unexpected(st.error());
    return SharedBytes(std::move(bytes));
  }
  struct Anonymous {
    void* memory = nullptr;
    size_t length = 0;
    ~Anonymous() { UnmapHuge(memory, length); }
  };
  auto owner = std::make_shared<Anonymous>();
  owner->length = (size + HugeSlabs::kSlabBytes - 1) / HugeSlabs::kSlabBytes * HugeSlabs::kSlabBytes;
  try {
    owner->memory = MapHuge(owner->length);
  } catch (const std::bad_alloc&) {
    return Fail("no memory for " + std::to_string(size) + " bytes");
  }
  if (auto st = fill(static_cast<uint8_t*>(owner->memory)); !st) return tl::unexpected(st.error());
  SharedBytes out;
  out.data_ = static_cast<const uint8_t*>(owner->memory);
  out.size_ = size;
  out.owner_ = std::move(owner);
  return out;
}

SharedBytes::SharedBytes(std::vector<uint8_t> owned) {
  auto buffer = std::make_shared<std::vector<uint8_t>>(std::move(owned));
  data_ = buffer->data();
  size_ = buffer->size();
  owner_ = std::move(buffer);
}

Result<SharedBytes> SharedBytes::MapFile(const std::string& path, Access access) {
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
  if (access == Access::kSequential) madvise(mapping->address, mapping->length, MADV_SEQUENTIAL);
  mapping->slot = RegisterMapping(mapping->address, mapping->length, path);
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
