#include "src/report/json_text.h"

#include <cstdio>

namespace ptprof {

std::string HexAddress(uint64_t value) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(value));
  return buf;
}

size_t PutHexAddress(char* out, uint64_t value) {
  const int digits = value ? (67 - __builtin_clzll(value)) / 4 : 1;
  out[0] = '0';
  out[1] = 'x';
  for (int i = digits + 1; i >= 2; --i, value >>= 4) out[i] = "0123456789abcdef"[value & 0xf];
  return static_cast<size_t>(digits) + 2;
}

void AppendHexAddress(std::string& out, uint64_t value) {
  char buf[kMaxHexAddress];
  out.append(buf, PutHexAddress(buf, value));
}

void AppendDecimal(std::string& out, uint64_t value) {
  char buf[20];
  char* end = buf + sizeof buf;
  char* p = end;
  do {
    *--p = static_cast<char>('0' + value % 10);
    value /= 10;
  } while (value);
  out.append(p, static_cast<size_t>(end - p));
}

std::string JsonString(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 2);
  out += '"';
  for (char c : text) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += c;
        }
    }
  }
  out += '"';
  return out;
}

}  // namespace ptprof
