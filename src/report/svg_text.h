// Text pieces every SVG writer needs: characters escaped for XML attributes and text, and
// coordinates with one decimal (small files, stable output for golden tests).
#pragma once

#include <string>

namespace ptprof {

// `s` with <, >, & and " escaped, safe inside SVG/XML text and double-quoted attributes.
std::string SvgEscape(const std::string& s);
// A coordinate or length with one decimal: "12.5".
std::string SvgCoord(double v);

}  // namespace ptprof
