#pragma once
// IniFile answers "what does this snapshot .ini file say, and on which line?": sections of
// key=value entries, each remembering its line so that errors can name file, line and key.
// Keys and section names compare case-insensitively, as the CoreSight snapshot format allows.
#include <string>
#include <string_view>
#include <vector>

#include "src/model/result.h"

namespace ptprof::etm {

struct IniEntry {
  std::string key;
  std::string value;
  int line = 0;
};

struct IniSection {
  std::string name;
  int line = 0;
  std::vector<IniEntry> entries;

  // The first entry called `key`, or nullptr.
  const IniEntry* Find(std::string_view key) const;
};

struct IniFile {
  std::string path;  // as given, used in error messages
  std::vector<IniSection> sections;

  // The first section called `name`, or nullptr.
  const IniSection* Find(std::string_view name) const;
  // "snapshot.ini:12" for messages.
  std::string Where(int line) const;
};

// Parses `text` (the contents of `path`): "[section]" lines, "key=value" lines, blank lines and
// comments starting with ';' or '#'. An entry before any section or a line that is neither is an
// error naming the file and line.
Result<IniFile> ParseIni(const std::string& path, std::string_view text);

// Reads and parses `path`; a missing file is an error naming it.
Result<IniFile> ReadIni(const std::string& path);

bool EqualsIgnoreCase(std::string_view a, std::string_view b);

}  // namespace ptprof::etm
