#include "decoders/etm/snapshot.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>

#include <sys/stat.h>

#include "decoders/etm/ini_file.h"

namespace ptprof::etm {

namespace {

std::string JoinPath(const std::string& dir, const std::string& name) {
  if (!name.empty() && name.front() == '/') return name;
  if (dir.empty() || dir.back() == '/') return dir + name;
  return dir + "/" + name;
}

bool IsRegularFile(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::string StripSuffix(const std::string& key) {
  size_t paren = key.find('(');
  return paren == std::string::npos ? key : key.substr(0, paren);
}

// The value of `key` in `section`, or an error naming the file, section and key.
Result<const IniEntry*> Required(const IniFile& ini, const IniSection& section,
                                 const std::string& key) {
  const IniEntry* e = section.Find(key);
  if (!e || e->value.empty())
    return Fail(ini.Where(section.line) + ": [" + section.name + "] has no '" + key + "' entry");
  return e;
}

Result<const IniSection*> RequiredSection(const IniFile& ini, const std::string& name) {
  const IniSection* s = ini.Find(name);
  if (!s) return Fail(ini.path + ": no [" + name + "] section");
  return s;
}

Result<MemoryDump> ReadDump(const std::string& dir, const IniFile& ini, const IniSection& s) {
  MemoryDump dump;
  dump.where = ini.path + ":[" + s.name + "]";
  auto file = Required(ini, s, "file");
  if (!file) return tl::unexpected(file.error());
  dump.file = JoinPath(dir, (*file)->value);
  if (!IsRegularFile(dump.file))
    dump.missing = ini.Where((*file)->line) + ": file: dump file '" + dump.file + "' does not exist";
  auto address = Required(ini, s, "address");
  if (!address) return tl::unexpected(address.error());
  auto a = ParseNumber((*address)->value, ini.Where((*address)->line), "address");
  if (!a) return tl::unexpected(a.error());
  dump.address = *a;
  if (const IniEntry* off = s.Find("offset")) {
    auto o = ParseNumber(off->value, ini.Where(off->line), "offset");
    if (!o) return tl::unexpected(o.error());
    dump.offset = *o;
  }
  if (const IniEntry* len = s.Find("length")) {
    auto l = ParseNumber(len->value, ini.Where(len->line), "length");
    if (!l) return tl::unexpected(l.error());
    dump.length = *l;
  }
  if (const IniEntry* space = s.Find("space")) dump.space = space->value;
  return dump;
}

Result<SnapshotDevice> ReadDevice(const std::string& dir, const std::string& ini_path) {
  auto ini = ReadIni(ini_path);
  if (!ini) return tl::unexpected(ini.error());
  SnapshotDevice dev;
  dev.ini_file = ini_path;
  auto device = RequiredSection(*ini, "device");
  if (!device) return tl::unexpected(device.error());
  auto name = Required(*ini, **device, "name");
  if (!name) return tl::unexpected(name.error());
  dev.name = (*name)->value;
  auto type = Required(*ini, **device, "type");
  if (!type) return tl::unexpected(type.error());
  dev.type = (*type)->value;
  if (const IniEntry* cls = (*device)->Find("class")) dev.device_class = cls->value;
  if (const IniSection* regs = ini->Find("regs")) {
    for (const IniEntry& e : regs->entries)
      dev.registers.push_back(RegisterLine{StripSuffix(e.key), e.value, ini->Where(e.line)});
  }
  for (const IniSection& s : ini->sections) {
    if (s.name.size() >= 4 && EqualsIgnoreCase(s.name.substr(0, 4), "dump")) {
      auto dump = ReadDump(dir, *ini, s);
      if (!dump) return tl::unexpected(dump.error());
      dev.dumps.push_back(std::move(*dump));
    }
  }
  return dev;
}

Result<void> ReadTraceMetadata(const std::string& path, Snapshot& snap) {
  auto ini = ReadIni(path);
  if (!ini) return tl::unexpected(ini.error());
  auto list = RequiredSection(*ini, "trace_buffers");
  if (!list) return tl::unexpected(list.error());
  auto buffers = Required(*ini, **list, "buffers");
  if (!buffers) return tl::unexpected(buffers.error());
  std::string names = (*buffers)->value;
  size_t start = 0;
  while (start <= names.size()) {
    size_t comma = names.find(',', start);
    std::string id = names.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    id.erase(std::remove_if(id.begin(), id.end(), [](char c) { return c == ' ' || c == '\t'; }),
             id.end());
    if (!id.empty()) {
      const IniSection* s = ini->Find(id);
      if (!s)
        return Fail(ini->Where((*buffers)->line) + ": buffers: no [" + id + "] section for buffer '" +
                    id + "'");
      TraceBuffer buf;
      buf.where = ini->path + ":[" + s->name + "]";
      auto name = Required(*ini, *s, "name");
      if (!name) return tl::unexpected(name.error());
      buf.name = (*name)->value;
      auto file = Required(*ini, *s, "file");
      if (!file) return tl::unexpected(file.error());
      buf.file = JoinPath(snap.dir, (*file)->value);
      if (!IsRegularFile(buf.file))
        return Fail(ini->Where((*file)->line) + ": file: trace buffer file '" + buf.file +
                    "' does not exist");
      auto format = Required(*ini, *s, "format");
      if (!format) return tl::unexpected(format.error());
      buf.format = (*format)->value;
      if (buf.format != "coresight" && buf.format != "dstream_coresight" &&
          buf.format != "source_data")
        return Fail(ini->Where((*format)->line) + ": format: unknown trace buffer format '" +
                    buf.format + "' (coresight, dstream_coresight or source_data)");
      snap.buffers.push_back(std::move(buf));
    }
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (snap.buffers.empty()) return Fail(ini->Where((*buffers)->line) + ": buffers: lists no buffer");
  auto sources = RequiredSection(*ini, "source_buffers");
  if (!sources) return tl::unexpected(sources.error());
  for (const IniEntry& e : (*sources)->entries) {
    if (!snap.Buffer(e.value)) {  // a buffer the snapshot did not capture: nothing to decode
      snap.warnings.push_back(ini->Where(e.line) + ": " + e.key + ": no trace buffer named '" +
                              e.value + "' in 'buffers': source ignored");
      continue;
    }
    snap.source_buffers.emplace_back(e.key, e.value);
  }
  if (const IniSection* cores = ini->Find("core_trace_sources")) {
    for (const IniEntry& e : cores->entries) snap.core_sources.emplace_back(e.key, e.value);
  }
  return {};
}

}  // namespace

Result<uint64_t> ParseNumber(const std::string& text, const std::string& where,
                             const std::string& what) {
  if (text.empty()) return Fail(where + ": " + what + ": empty value");
  errno = 0;
  char* end = nullptr;
  unsigned long long v = std::strtoull(text.c_str(), &end, 0);
  if (errno != 0 || end == text.c_str() || *end != '\0' || text.front() == '-')
    return Fail(where + ": " + what + ": '" + text + "' is not a number");
  return static_cast<uint64_t>(v);
}

const RegisterLine* SnapshotDevice::Register(const std::string& reg) const {
  for (const RegisterLine& r : registers)
    if (EqualsIgnoreCase(r.name, reg)) return &r;
  return nullptr;
}

const SnapshotDevice* Snapshot::Device(const std::string& name) const {
  for (const SnapshotDevice& d : devices)
    if (d.name == name) return &d;
  return nullptr;
}

const TraceBuffer* Snapshot::Buffer(const std::string& name) const {
  for (const TraceBuffer& b : buffers)
    if (b.name == name) return &b;
  return nullptr;
}

std::string Snapshot::CoreOf(const std::string& source) const {
  for (const auto& [core, src] : core_sources)
    if (src == source) return core;
  return {};
}

std::vector<std::string> Snapshot::SourcesOf(const std::string& buffer) const {
  std::vector<std::string> out;
  for (const auto& [source, buf] : source_buffers)
    if (buf == buffer) out.push_back(source);
  std::sort(out.begin(), out.end());
  return out;
}

Result<Snapshot> LoadSnapshot(const std::string& dir) {
  Snapshot snap;
  snap.dir = dir;
  std::string snapshot_ini = JoinPath(dir, "snapshot.ini");
  auto ini = ReadIni(snapshot_ini);
  if (!ini) return tl::unexpected(ini.error());
  auto list = RequiredSection(*ini, "device_list");
  if (!list) return tl::unexpected(list.error());
  for (const IniEntry& e : (*list)->entries) {
    std::string path = JoinPath(dir, e.value);
    if (!IsRegularFile(path))
      return Fail(ini->Where(e.line) + ": " + e.key + ": device file '" + path + "' does not exist");
    auto dev = ReadDevice(dir, path);
    if (!dev) return tl::unexpected(dev.error());
    if (snap.Device(dev->name))
      return Fail(dev->ini_file + ": device name '" + dev->name + "' is used twice");
    snap.devices.push_back(std::move(*dev));
  }
  auto trace = RequiredSection(*ini, "trace");
  if (!trace) return tl::unexpected(trace.error());
  auto metadata = Required(*ini, **trace, "metadata");
  if (!metadata) return tl::unexpected(metadata.error());
  std::string trace_ini = JoinPath(dir, (*metadata)->value);
  if (!IsRegularFile(trace_ini))
    return Fail(ini->Where((*metadata)->line) + ": metadata: trace metadata file '" + trace_ini +
                "' does not exist");
  auto status = ReadTraceMetadata(trace_ini, snap);
  if (!status) return tl::unexpected(status.error());
  for (const auto& [source, buffer] : snap.source_buffers) {
    if (!snap.Device(source))
      return Fail(trace_ini + ": [source_buffers] names source '" + source +
                  "' but no device in snapshot.ini has that name");
  }
  return snap;
}

}  // namespace ptprof::etm
