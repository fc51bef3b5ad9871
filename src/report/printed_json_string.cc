#include "src/report/printed_json_string.h"

#include <nlohmann/json.hpp>

namespace ptprof {

void AppendPrintedString(std::string& out, std::string_view text, BadUtf8 bad) {
  for (unsigned char c : text) {
    if (c < 0x20 || c >= 0x7f || c == '"' || c == '\\') {
      const auto handler = bad == BadUtf8::kReplace ? nlohmann::json::error_handler_t::replace
                                                    : nlohmann::json::error_handler_t::strict;
      out += nlohmann::json(std::string(text)).dump(-1, ' ', false, handler);
      return;
    }
  }
  out += '"';
  out += text;
  out += '"';
}

void CheckPrintable(std::string_view text) {
  for (unsigned char c : text)
    if (c >= 0x80) {
      (void)nlohmann::json(std::string(text)).dump();
      return;
    }
}

}  // namespace ptprof
