#pragma once
// AppendPrintedString answers "how does nlohmann's printer write this string?" for the writers
// that make a large JSON text themselves, byte for byte as printing a document holding it would
// (dump with ensure_ascii off): quoted as it is when every byte is printable ASCII other than a
// quote or a backslash (a symbol name, nearly always), else by the printer itself: its escapes,
// and for a byte that is not UTF-8 its refusal or its replacement character.
#include <string>
#include <string_view>

namespace ptprof {

enum class BadUtf8 {
  kThrow,    // as dump() does: nlohmann::json::type_error
  kReplace,  // as dump(..., error_handler_t::replace) does: U+FFFD
};

void AppendPrintedString(std::string& out, std::string_view text, BadUtf8 bad);

// Throws what the printer (BadUtf8::kThrow) throws for `text` when it is not UTF-8, so that a
// writer can refuse its input before it writes anything; only text with a byte past ASCII is
// printed to find out.
void CheckPrintable(std::string_view text);

}  // namespace ptprof
