#include "src/record/triggers/tracefs.h"

#include <sys/mount.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

namespace ptprof::record::triggers {

namespace {
bool IsDir(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

Result<std::string> ReadText(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Fail(fmt::format("{}: cannot read: {}", path, std::strerror(errno)));
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}
}  // namespace

Result<std::string> FindTracefs(bool mount_if_missing) {
  for (const char* dir : {"/sys/kernel/tracing", "/sys/kernel/debug/tracing"})
    if (IsDir(std::string(dir) + "/events")) return std::string(dir);
  if (!mount_if_missing) return Fail("tracefs is not mounted (/sys/kernel/tracing/events missing)");
  if (mount("nodev", "/sys/kernel/tracing", "tracefs", 0, nullptr) != 0)
    return Fail(fmt::format("tracefs is not mounted and mounting it at /sys/kernel/tracing failed: "
                            "{} (run `mount -t tracefs nodev /sys/kernel/tracing` as root)",
                            std::strerror(errno)));
  if (!IsDir("/sys/kernel/tracing/events"))
    return Fail("/sys/kernel/tracing: tracefs mounted but has no events/ (kernel without tracepoints?)");
  return std::string("/sys/kernel/tracing");
}

Result<uint64_t> ReadTracepointId(const std::string& tracefs, const std::string& system,
                                  const std::string& name) {
  const std::string path = fmt::format("{}/events/{}/{}/id", tracefs, system, name);
  auto text = ReadText(path);
  if (!text) return tl::unexpected(text.error());
  char* end = nullptr;
  const uint64_t id = std::strtoull(text->c_str(), &end, 10);
  if (end == text->c_str()) return Fail(fmt::format("{}: offset 0: not a number", path));
  return id;
}

Result<TracepointField> FindFieldInFormat(const std::string& format, const std::string& field,
                                          const std::string& where) {
  // Lines look like "\tfield:long id;\toffset:8;\tsize:8;\tsigned:1;".
  std::istringstream lines(format);
  std::string line;
  while (std::getline(lines, line)) {
    const size_t decl = line.find("field:");
    const size_t semi = line.find(';');
    if (decl == std::string::npos || semi == std::string::npos) continue;
    std::string declaration = line.substr(decl + 6, semi - decl - 6);
    if (size_t bracket = declaration.find('['); bracket != std::string::npos)
      declaration.resize(bracket);
    const size_t space = declaration.rfind(' ');
    if (declaration.substr(space == std::string::npos ? 0 : space + 1) != field) continue;
    const size_t offset = line.find("offset:");
    const size_t size = line.find("size:");
    if (offset == std::string::npos || size == std::string::npos)
      return Fail(fmt::format("{}: field {}: no offset/size", where, field));
    return TracepointField{static_cast<uint32_t>(std::stoul(line.substr(offset + 7))),
                           static_cast<uint32_t>(std::stoul(line.substr(size + 5)))};
  }
  return Fail(fmt::format("{}: no field '{}'", where, field));
}

Result<TracepointField> ReadTracepointField(const std::string& tracefs, const std::string& system,
                                            const std::string& name, const std::string& field) {
  const std::string path = fmt::format("{}/events/{}/{}/format", tracefs, system, name);
  auto text = ReadText(path);
  if (!text) return tl::unexpected(text.error());
  return FindFieldInFormat(*text, field, path);
}

}  // namespace ptprof::record::triggers
