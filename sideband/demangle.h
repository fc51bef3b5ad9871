#pragma once
// Demangled answers "what does a person call this symbol?": the source-level name of a C++
// symbol (Itanium ABI, "_Z..."), as perf and c++filt print it; any other name as it is.
#include <string>
#include <string_view>

namespace ptprof {

// `linkage` demangled when it is a C++ name that demangles, else `linkage` itself.
std::string Demangled(const std::string& linkage);

// A demangled function name without its parameters and what follows them ("ns::f<int>" for
// "ns::f<int>(int) const"): how a person names the function. Any other name as it is.
std::string WithoutParameters(const std::string& demangled);

// Whether `name`, as a user gives it, names the function shown as `shown` (a demangled name):
// the same name, or `shown` WithoutParameters.
bool NamesShown(std::string_view name, const std::string& shown);

// Whether `name`, as a user gives it, names the symbol whose linkage name is `linkage`: the
// linkage name itself, or for a C++ symbol NamesShown of its demangled name.
bool NamesSymbol(std::string_view name, const std::string& linkage);

// Whether `linkage` may be a C++ name (Demangled then may give something else).
inline bool MayBeMangled(const std::string& linkage) {
  return linkage.size() > 2 && linkage[0] == '_' && linkage[1] == 'Z';
}

}  // namespace ptprof
