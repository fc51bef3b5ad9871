#include "src/record/swbt/proc_maps.h"

#include <cstdlib>
#include <map>

namespace ptprof::swbt {

std::vector<MapsLine> ParseProcMaps(std::string_view text) {
  std::vector<MapsLine> lines;
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find('\n', at);
    if (end == std::string_view::npos) end = text.size();
    const std::string line(text.substr(at, end - at));
    at = end + 1;
    // start-end perms offset dev inode [path]
    char* p = nullptr;
    MapsLine m;
    m.start = std::strtoull(line.c_str(), &p, 16);
    if (*p != '-') continue;
    m.end = std::strtoull(p + 1, &p, 16);
    if (*p != ' ' || line.size() < static_cast<size_t>(p - line.c_str()) + 5) continue;
    m.perms = std::string(p + 1, 4);
    p += 5;
    m.offset = std::strtoull(p, &p, 16);
    size_t field = static_cast<size_t>(p - line.c_str());
    for (int skip = 0; skip < 2; ++skip) {  // dev, inode
      while (field < line.size() && line[field] == ' ') ++field;
      while (field < line.size() && line[field] != ' ') ++field;
    }
    while (field < line.size() && line[field] == ' ') ++field;
    m.path = line.substr(field);
    if (m.end <= m.start) continue;
    lines.push_back(m);
  }
  return lines;
}

std::vector<MappedFile> ExecutableFiles(const std::vector<MapsLine>& lines) {
  std::vector<MappedFile> files;
  std::map<std::string, uint64_t> base;  // path -> start - offset of its first mapping
  for (const MapsLine& m : lines)
    if (!m.path.empty() && m.path[0] == '/' && !base.count(m.path)) base[m.path] = m.start - m.offset;
  for (const MapsLine& m : lines) {
    if (m.path.empty() || m.path[0] != '/' || m.perms.size() < 3 || m.perms[2] != 'x') continue;
    bool seen = false;
    for (const MappedFile& f : files) seen = seen || f.path == m.path;
    if (!seen) files.push_back({m.path, base[m.path]});
  }
  return files;
}

const MapsLine* FindMapping(const std::vector<MapsLine>& lines, uint64_t address) {
  for (const MapsLine& m : lines)
    if (address >= m.start && address < m.end) return &m;
  return nullptr;
}

}  // namespace ptprof::swbt
