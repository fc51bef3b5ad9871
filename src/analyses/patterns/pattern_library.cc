#include "src/analyses/patterns/pattern_library.h"

#include <cassert>

#include "src/analyses/patterns/builtin_patterns.h"
#include "src/analyses/patterns/pattern_parser.h"

namespace ptprof::patterns {

PatternLibrary::PatternLibrary() {
  for (const BuiltinPattern& builtin : BuiltinPatterns()) {
    auto pattern = ParsePattern(std::string(builtin.name), builtin.definition);
    assert(pattern && "built-in patterns parse");
    if (pattern) patterns_[pattern->name] = std::move(*pattern);
  }
}

Status PatternLibrary::Define(std::string_view spec) {
  size_t eq = spec.find('=');
  if (eq == std::string_view::npos)
    return Fail("--pattern '" + std::string(spec) + "': expected NAME=DEFINITION");
  std::string name(spec.substr(0, eq));
  while (!name.empty() && name.back() == ' ') name.pop_back();
  while (!name.empty() && name.front() == ' ') name.erase(name.begin());
  if (!IsPatternName(name))
    return Fail("--pattern '" + std::string(spec) +
                "': a pattern name is a letter or '_' followed by letters, digits or '_'");
  auto pattern = ParsePattern(name, spec.substr(eq + 1));
  if (!pattern) return tl::unexpected(pattern.error());
  patterns_[name] = std::move(*pattern);
  return {};
}

Result<Pattern> PatternLibrary::Find(const std::string& name) const {
  auto it = patterns_.find(name);
  if (it != patterns_.end()) return it->second;
  std::string known;
  for (const auto& [n, p] : patterns_) known += (known.empty() ? "" : ", ") + n;
  return Fail("unknown pattern name '" + name + "' (built-ins and definitions: " + known +
              "; define one with --pattern " + name + "=DEFINITION)");
}

std::vector<std::string> PatternLibrary::Names() const {
  std::vector<std::string> names;
  for (const auto& [n, p] : patterns_) names.push_back(n);
  return names;
}

}  // namespace ptprof::patterns
