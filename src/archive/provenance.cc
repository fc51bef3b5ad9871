#include "src/archive/provenance.h"

#include <unistd.h>

#include <ctime>
#include <utility>

namespace ptprof::archive {

std::string UtcNow() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

std::string HostName() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0) return "";
  return name;
}

Manifest NewManifest(std::string tool, std::string kind, std::vector<std::string> paths) {
  Manifest manifest;
  manifest.tool = std::move(tool);
  manifest.created = UtcNow();
  manifest.source = {std::move(kind), std::move(paths), HostName()};
  return manifest;
}

}  // namespace ptprof::archive
