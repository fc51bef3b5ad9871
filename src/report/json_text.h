#pragma once
// Small helpers shared by every writer: hex addresses as JSON expects them and JSON string escaping.
#include <cstdint>
#include <string>
#include <string_view>

namespace ptprof {

// "0x401000": the spelling of every address in JSON output.
std::string HexAddress(uint64_t value);

// `text` as a quoted JSON string.
std::string JsonString(std::string_view text);

}  // namespace ptprof
