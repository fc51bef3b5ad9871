#include "sideband/image_spec.h"

#include <cerrno>
#include <cstdlib>
#include <optional>

namespace ptprof {

namespace {

// A whole C-notation number (decimal, 0x hex, 0 octal), or nothing.
std::optional<uint64_t> WholeNumber(const std::string& text) {
  if (text.empty()) return std::nullopt;
  errno = 0;
  char* end = nullptr;
  unsigned long long value = std::strtoull(text.c_str(), &end, 0);
  if (errno != 0 || end == text.c_str() || *end != '\0') return std::nullopt;
  return static_cast<uint64_t>(value);
}

// Splits a trailing ":NUMBER" off `text`. Returns false (and leaves `text`) when there is none.
bool TakeTrailingNumber(std::string& text, uint64_t& number) {
  size_t colon = text.rfind(':');
  if (colon == std::string::npos) return false;
  auto value = WholeNumber(text.substr(colon + 1));
  if (!value) return false;
  number = *value;
  text.erase(colon);
  return true;
}

}  // namespace

Result<FileRangeSpec> ParseFileRangeSpec(const std::string& text) {
  FileRangeSpec spec;
  spec.file = text;
  size_t colon = text.rfind(':');
  if (colon == std::string::npos) return spec;
  std::string range = text.substr(colon + 1);
  size_t dash = range.find('-');
  auto from = WholeNumber(range.substr(0, dash));
  if (!from) return spec;  // the ':' is part of the file name
  if (dash == std::string::npos) {
    spec.offset = *from;
  } else {
    auto to = WholeNumber(range.substr(dash + 1));
    if (!to) return spec;
    if (*to <= *from) return Fail(text + ": empty or reversed file range " + range);
    spec.offset = *from;
    spec.size = *to - *from;
  }
  spec.file.erase(colon);
  return spec;
}

Result<RawImageSpec> ParseRawImageSpec(const std::string& text) {
  std::string rest = text;
  RawImageSpec spec;
  if (!TakeTrailingNumber(rest, spec.address))
    return Fail("--raw " + text + ": expected FILE[:FROM[-TO]]:ADDRESS");
  auto range = ParseFileRangeSpec(rest);
  if (!range) return Fail("--raw " + range.error().message);
  spec.file = range->file;
  spec.file_offset = range->offset;
  spec.size = range->size;
  if (spec.file.empty()) return Fail("--raw " + text + ": missing file name");
  return spec;
}

Result<ElfImageSpec> ParseElfImageSpec(const std::string& text) {
  ElfImageSpec spec;
  spec.file = text;
  TakeTrailingNumber(spec.file, spec.base);
  if (spec.file.empty()) return Fail("--elf " + text + ": missing file name");
  return spec;
}

}  // namespace ptprof
