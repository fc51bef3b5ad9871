#include "src/model/json_text.h"

#include <charconv>
#include <cstdio>

namespace ptprof {

std::string HexAddress(uint64_t value) {
  char buf[kMaxHexAddress];
  return std::string(buf, PutHexAddress(buf, value));
}

size_t PutHexAddress(char* out, uint64_t value) {
  out[0] = '0';
  out[1] = 'x';
  return static_cast<size_t>(std::to_chars(out + 2, out + kMaxHexAddress, value, 16).ptr - out);
}

void AppendHexAddress(std::string& out, uint64_t value) {
  char buf[kMaxHexAddress];
  out.append(buf, PutHexAddress(buf, value));
}

void AppendPaddedDecimal(std::string& out, uint64_t value, size_t width) {
  char buf[20];
  const size_t digits = static_cast<size_t>(std::to_chars(buf, buf + sizeof buf, value).ptr - buf);
  if (digits < width) out.append(width - digits, ' ');
  out.append(buf, digits);
}

void AppendDecimal(std::string& out, uint64_t value) { AppendPaddedDecimal(out, value, 0); }

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

std::string CsvQuoted(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 2);
  out += '"';
  for (const char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
  return out;
}

std::string CsvField(std::string_view text) {
  if (text.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(text);
  return CsvQuoted(text);
}

}  // namespace ptprof
