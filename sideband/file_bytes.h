#pragma once
// Reading whole input files with errors that name the file.
#include <cstdint>
#include <string>
#include <vector>

#include "src/model/result.h"

namespace ptprof {

// The bytes of `path`, or an error naming the file. An empty file is allowed here: callers decide
// whether empty input is an error for them.
Result<std::vector<uint8_t>> ReadFileBytes(const std::string& path);

// The bytes of `path` from `offset` up to `size` bytes (to the end when size is UINT64_MAX).
Result<std::vector<uint8_t>> ReadFileRange(const std::string& path, uint64_t offset, uint64_t size);

}  // namespace ptprof
