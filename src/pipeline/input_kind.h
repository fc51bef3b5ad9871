#pragma once
// InputKind answers "what is this input?" from its content, never from its file name.
#include <cstdint>
#include <string>
#include <vector>

#include "src/model/result.h"

namespace ptprof {

enum class InputKind {
  kRawPt,             // a raw Intel PT packet stream (contains a PSB)
  kPerfData,          // perf.data, file mode ("PERFILE2")
  kPerfDataPipe,      // perf.data, pipe mode
  kPtar,              // ptprof's own archive (zstd frame with a ptar manifest)
  kCoreSightSnapshot, // a directory holding snapshot.ini
  kElf,
  kUnknown,
};

const char* InputKindName(InputKind kind);

// Classifies the first bytes of a file (at least 16 are needed for a reliable answer).
InputKind ClassifyBytes(const std::vector<uint8_t>& head);

// Classifies a path: directories by their snapshot.ini, files by their first 4 KiB.
Result<InputKind> ClassifyPath(const std::string& path);

}  // namespace ptprof
