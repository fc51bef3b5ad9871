#pragma once
// Where and when an archive (or a perf.data) is made: the fields a new manifest starts with.
#include <string>
#include <vector>

#include "src/archive/manifest.h"

namespace ptprof::archive {

// The time now in UTC, as a manifest's `created` holds it: ISO 8601 to the second.
std::string UtcNow();

// This machine's host name; empty when it has none.
std::string HostName();

// A manifest made now, on this host, by `tool`, of a source of `kind` read from `paths`.
Manifest NewManifest(std::string tool, std::string kind, std::vector<std::string> paths);

}  // namespace ptprof::archive
