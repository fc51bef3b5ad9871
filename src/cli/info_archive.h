#pragma once
// `ptprof info` for .ptar archives.
#include <string>
#include <vector>

#include "src/archive/manifest.h"

namespace ptprof::cli {

// "triggers:  N" and one line per trigger (kind, label, stream, offset, tid, time, latency).
void PrintTriggerLines(const std::vector<archive::TriggerEntry>& triggers);

// Prints the archive's manifest (source, parameters, streams, images, sideband, triggers) and its
// members with their offsets, after checking every member's checksum; returns the exit status
// (1 with one line naming the member when the archive is damaged).
int RunArchiveInfo(const std::string& input, const std::string& format);

}  // namespace ptprof::cli
