#pragma once
// The `ptprof validate` report: what was compared, path consistency with its counterexamples, and
// the profile similarity overall and per function, as text or as one JSON object
// (docs/validate.md names the fields).
#include <cstdio>
#include <string>

#include <nlohmann/json.hpp>

#include "src/analyses/crossval/cross_validate.h"

namespace ptprof {

struct ValidateInputs {
  std::string a, b;  // the files
  std::string b_kind;  // "lbr", "swbt"
};

void WriteValidateText(std::FILE* out, const ValidateInputs& in, const CrossValidation& v);
nlohmann::ordered_json ValidateJson(const ValidateInputs& in, const CrossValidation& v);

// 100 * part / whole, 0 for an empty whole.
double Percent(uint64_t part, uint64_t whole);

}  // namespace ptprof
