#pragma once
// SessionArchive answers "how does a session become a self-contained .ptar, and back?": writing
// stores every stream, every image (ELF files whole, raw images as their byte range, each once
// however often it is loaded) and every sideband file as members and records them in the
// manifest; reading verifies every member and rebuilds the session with its images extracted to
// a private temporary directory. docs/archive.md is the user guide.
#include <string>

#include "src/model/result.h"
#include "src/pipeline/session.h"

namespace ptprof {

struct ArchiveWriteOptions {
  bool force = false;  // replace an existing output
  std::string tool;    // "ptprof 0.1.0"
};

Status WriteSessionArchive(const Session& session, const std::string& output,
                           const ArchiveWriteOptions& options);

// Opens and verifies a .ptar. Errors name the archive, the offset and the member or field.
Result<Session> OpenArchiveSession(const std::string& path);

}  // namespace ptprof
