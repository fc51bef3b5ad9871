#pragma once
// Small helpers shared by every writer (the reports' and the decoders' own listings): hex
// addresses as JSON expects them, decimal numbers, JSON string escaping and CSV fields.
#include <cstdint>
#include <string>
#include <string_view>

namespace ptprof {

// "0x401000": the spelling of every address in JSON output.
std::string HexAddress(uint64_t value);
// The same appended to `out`, and a number in decimal: for writers that run once per block.
void AppendHexAddress(std::string& out, uint64_t value);
void AppendDecimal(std::string& out, uint64_t value);
// A number in decimal, right-aligned in `width` characters (as printf's "%*" PRIu64 writes it).
void AppendPaddedDecimal(std::string& out, uint64_t value, size_t width);
// The address written at `out`, which has room for kMaxHexAddress bytes; returns the bytes written.
inline constexpr size_t kMaxHexAddress = 18;
size_t PutHexAddress(char* out, uint64_t value);

// `text` as a quoted JSON string.
std::string JsonString(std::string_view text);

// `text` as a quoted CSV field (RFC 4180: in double quotes, each quote doubled).
std::string CsvQuoted(std::string_view text);
// `text` as a CSV field: as it is, or CsvQuoted when it holds a comma, a quote or a line break
// (a demangled C++ name: "f(int, int)").
std::string CsvField(std::string_view text);

}  // namespace ptprof
