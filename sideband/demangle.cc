#include "sideband/demangle.h"

#include <cxxabi.h>

#include <cstdlib>
#include <memory>

namespace ptprof {

std::string Demangled(const std::string& linkage) {
  if (!MayBeMangled(linkage)) return linkage;
  int status = 0;
  std::unique_ptr<char, decltype(&std::free)> name(
      abi::__cxa_demangle(linkage.c_str(), nullptr, nullptr, &status), &std::free);
  if (status != 0 || !name) return linkage;
  return name.get();
}

std::string WithoutParameters(const std::string& demangled) {
  // The parameter list is the last parenthesised group at depth 0 that the name ends with, give
  // or take qualifiers after it (" const", " &", " noexcept").
  // Scanning back from the last ')' finds its own '(' first, so an operator's parentheses
  // ("operator()(int)") stay in the name.
  const size_t end = demangled.find_last_of(')');
  if (end == std::string::npos) return demangled;
  int depth = 0;
  for (size_t i = end + 1; i-- > 0;) {
    const char c = demangled[i];
    if (c == ')' || c == '>') ++depth;
    else if (c == '(' || c == '<') --depth;
    if (depth == 0) return i == 0 ? demangled : demangled.substr(0, i);  // (nothing before it)
  }
  return demangled;
}

bool NamesShown(std::string_view name, const std::string& shown) {
  if (shown == name) return true;
  // Only a name followed by its parameters can be the same without them.
  return shown.size() > name.size() && shown.compare(0, name.size(), name) == 0 &&
         shown[name.size()] == '(' && WithoutParameters(shown) == name;
}

bool NamesSymbol(std::string_view name, const std::string& linkage) {
  if (linkage == name) return true;
  if (!MayBeMangled(linkage) || name.empty()) return false;
  // Cheap first: the name's last identifier must be in the linkage name ("main" of
  // "toplev::main" in "_ZN6toplev4mainEiPPc").
  std::string_view last = name.substr(0, name.find('('));
  if (const size_t colons = last.rfind("::"); colons != std::string_view::npos)
    last = last.substr(colons + 2);
  last = last.substr(0, last.find('<'));
  if (!last.empty() && linkage.find(last) == std::string::npos) return false;
  return NamesShown(name, Demangled(linkage));
}

}  // namespace ptprof
