#pragma once
// PatternLibrary answers "which pattern does this name stand for?": the built-ins
// (builtin_patterns.h) and the user's own definitions (--pattern NAME=DEF), a user definition
// replacing a built-in of the same name.
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "src/analyses/patterns/pattern.h"
#include "src/model/result.h"

namespace ptprof::patterns {

class PatternLibrary {
 public:
  // The built-ins only.
  PatternLibrary();

  // Adds "NAME=DEFINITION". Errors name the pattern and the column in DEFINITION.
  Status Define(std::string_view spec);

  // The pattern called `name`, or an error listing the names there are.
  Result<Pattern> Find(const std::string& name) const;

  std::vector<std::string> Names() const;

 private:
  std::map<std::string, Pattern> patterns_;
};

}  // namespace ptprof::patterns
