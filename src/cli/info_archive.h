#pragma once
// `ptprof info` for .ptar archives.
#include <string>

namespace ptprof::cli {

// Prints the archive's manifest (source, parameters, streams, images, sideband, triggers) and its
// members with their offsets, after checking every member's checksum; returns the exit status
// (1 with one line naming the member when the archive is damaged).
int RunArchiveInfo(const std::string& input, const std::string& format);

}  // namespace ptprof::cli
