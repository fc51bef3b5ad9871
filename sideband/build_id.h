#pragma once
// ReadBuildId answers "which build of a binary is this file?": the GNU build-id note
// (NT_GNU_BUILD_ID) of an ELF file, the key under which perf's build-id cache and ptprof's archive
// know a binary independently of its path.
#include <optional>
#include <string>

#include "src/model/result.h"

namespace ptprof {

// The build-id of the ELF `file` as lower-case hex, or nullopt when it has none. Fails (naming the
// file) when the file cannot be read or is not ELF.
Result<std::optional<std::string>> ReadBuildId(const std::string& file);

}  // namespace ptprof
