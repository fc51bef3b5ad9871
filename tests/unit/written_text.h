#pragma once
// WrittenText answers "what does this writer put in a file?" for tests of code that writes to a
// std::FILE*: the bytes `write` writes, caught in memory.
#include <stdio.h>

#include <cstdlib>
#include <functional>
#include <string>

namespace ptprof::testing {

inline std::string WrittenText(const std::function<void(std::FILE*)>& write) {
  char* data = nullptr;
  size_t size = 0;
  std::FILE* out = open_memstream(&data, &size);
  if (!out) return {};
  write(out);
  std::fclose(out);
  std::string text(data, size);
  std::free(data);
  return text;
}

}  // namespace ptprof::testing
