#pragma once
// ParsePattern answers "what does this pattern text mean?" for the pattern language of
// docs/delta.md, or says at which column (1-based, in `text`) it stops making sense:
//
//   definition  := alternative ( '|' alternative )*
//   alternative := element ( ';' [ '{' N '}' ] element )*     N: other instructions allowed between
//   element     := [ 'kernel:' | 'user:' ] ( 'bytes:' HH ( ' ' HH )* | mnemonic [ operand ( ',' operand )* ] )
//   operand     := r8 | r16 | r32 | r64 | reg | imm | mem | xmm | ymm | zmm | vec | x87 | '*' | '...' | literal
#include <string>
#include <string_view>

#include "src/analyses/patterns/pattern.h"
#include "src/model/result.h"

namespace ptprof::patterns {

// Errors read "pattern NAME: column C: <what was expected>".
Result<Pattern> ParsePattern(const std::string& name, std::string_view text);

// Whether `name` can name a pattern: a letter or '_' then letters, digits and '_'.
bool IsPatternName(std::string_view name);

}  // namespace ptprof::patterns
