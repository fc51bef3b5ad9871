#include "decoders/etm/ini_file.h"

#include <cctype>

#include "sideband/file_bytes.h"

namespace ptprof::etm {

namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

}  // namespace

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i])))
      return false;
  }
  return true;
}

const IniEntry* IniSection::Find(std::string_view key) const {
  for (const IniEntry& e : entries)
    if (EqualsIgnoreCase(e.key, key)) return &e;
  return nullptr;
}

const IniSection* IniFile::Find(std::string_view name) const {
  for (const IniSection& s : sections)
    if (EqualsIgnoreCase(s.name, name)) return &s;
  return nullptr;
}

std::string IniFile::Where(int line) const { return path + ":" + std::to_string(line); }

Result<IniFile> ParseIni(const std::string& path, std::string_view text) {
  IniFile ini;
  ini.path = path;
  int line_no = 0;
  while (!text.empty()) {
    size_t nl = text.find('\n');
    std::string_view raw = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    ++line_no;
    std::string_view line = Trim(raw);
    if (line.empty() || line.front() == ';' || line.front() == '#') continue;
    if (line.front() == '[') {
      if (line.back() != ']' || line.size() < 3)
        return Fail(ini.Where(line_no) + ": malformed section header '" + std::string(line) + "'");
      ini.sections.push_back(IniSection{std::string(Trim(line.substr(1, line.size() - 2))),
                                        line_no, {}});
      continue;
    }
    size_t eq = line.find('=');
    if (eq == std::string_view::npos || Trim(line.substr(0, eq)).empty())
      return Fail(ini.Where(line_no) + ": expected 'key=value' or '[section]', found '" +
                  std::string(line) + "'");
    if (ini.sections.empty())
      return Fail(ini.Where(line_no) + ": entry '" + std::string(Trim(line.substr(0, eq))) +
                  "' before any [section]");
    ini.sections.back().entries.push_back(IniEntry{std::string(Trim(line.substr(0, eq))),
                                                   std::string(Trim(line.substr(eq + 1))),
                                                   line_no});
  }
  return ini;
}

Result<IniFile> ReadIni(const std::string& path) {
  auto bytes = ReadFileBytes(path);
  if (!bytes) return tl::unexpected(bytes.error());
  return ParseIni(path, std::string_view(reinterpret_cast<const char*>(bytes->data()),
                                         bytes->size()));
}

}  // namespace ptprof::etm
