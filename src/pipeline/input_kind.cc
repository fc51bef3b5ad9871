#include "src/pipeline/input_kind.h"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <sys/stat.h>

#include "sideband/file_bytes.h"

namespace ptprof {

const char* InputKindName(InputKind kind) {
  switch (kind) {
    case InputKind::kRawPt: return "raw Intel PT";
    case InputKind::kPerfData: return "perf.data";
    case InputKind::kPerfDataPipe: return "perf.data (pipe mode)";
    case InputKind::kPtar: return "ptprof archive";
    case InputKind::kCoreSightSnapshot: return "CoreSight snapshot";
    case InputKind::kElf: return "ELF";
    case InputKind::kUnknown: return "unknown";
  }
  return "unknown";
}

InputKind ClassifyBytes(const std::vector<uint8_t>& head) {
  auto starts_with = [&](const char* magic, size_t n) {
    return head.size() >= n && std::memcmp(head.data(), magic, n) == 0;
  };
  if (starts_with("PERFILE2", 8)) {
    // File mode has a 104-byte header and says so in its size field; pipe mode a 16-byte one.
    if (head.size() >= 16) {
      uint64_t size;
      std::memcpy(&size, head.data() + 8, 8);
      if (size == 16) return InputKind::kPerfDataPipe;
    }
    return InputKind::kPerfData;
  }
  if (starts_with("\x7f" "ELF", 4)) return InputKind::kElf;
  if (starts_with("\x28\xb5\x2f\xfd", 4)) return InputKind::kPtar;  // zstd frame magic
  // A PSB is 16 bytes of 02 82 repeated; PT streams normally begin with one, and snapshot buffers
  // contain one somewhere.
  static const uint8_t kPsb[16] = {2, 0x82, 2, 0x82, 2, 0x82, 2, 0x82,
                                   2, 0x82, 2, 0x82, 2, 0x82, 2, 0x82};
  if (std::search(head.begin(), head.end(), std::begin(kPsb), std::end(kPsb)) != head.end())
    return InputKind::kRawPt;
  return InputKind::kUnknown;
}

Result<InputKind> ClassifyPath(const std::string& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) return Fail(path + ": cannot open: " + std::strerror(errno));
  if (S_ISDIR(st.st_mode)) {
    struct stat ini {};
    if (stat((path + "/snapshot.ini").c_str(), &ini) == 0) return InputKind::kCoreSightSnapshot;
    return Fail(path + ": a directory without snapshot.ini is not a trace input");
  }
  uint64_t size = static_cast<uint64_t>(st.st_size);
  auto head = ReadFileRange(path, 0, std::min<uint64_t>(size, 4096));
  if (!head) return tl::unexpected(head.error());
  return ClassifyBytes(*head);
}

}  // namespace ptprof
