#include "src/archive/manifest.h"

#include <limits>
#include <set>

#include <fmt/format.h>

namespace ptprof::archive {

namespace {

using Json = nlohmann::ordered_json;

std::string HexText(uint64_t value) { return fmt::format("{:#x}", value); }

// Reads the fields of one JSON object, remembering the path for error messages.
class FieldReader {
 public:
  FieldReader(const Json& object, std::string path) : object_(object), path_(std::move(path)) {}

  Status IsObject() const {
    if (!object_.is_object()) return Fail(Where("") + ": expected an object");
    return {};
  }
  const Json* Find(const char* key) const {
    auto it = object_.find(key);
    return it == object_.end() || it->is_null() ? nullptr : &*it;
  }
  std::string Where(const std::string& key) const {
    if (key.empty()) return "field '" + path_ + "'";
    return "field '" + (path_.empty() ? key : path_ + "." + key) + "'";
  }
  std::string Path(const std::string& key) const { return path_.empty() ? key : path_ + "." + key; }

  Status String(const char* key, std::string& out, bool required = false) const {
    const Json* value = Find(key);
    if (!value) return required ? Fail(Where(key) + ": missing") : Status{};
    if (!value->is_string()) return Fail(Where(key) + ": expected a string");
    out = value->get<std::string>();
    return {};
  }
  // An unsigned number, or a string in hex ("0x401000") for addresses.
  Status Unsigned(const char* key, uint64_t& out, uint64_t max = UINT64_MAX) const {
    const Json* value = Find(key);
    if (!value) return {};
    uint64_t v = 0;
    if (value->is_number_unsigned()) {
      v = value->get<uint64_t>();
    } else if (value->is_number_integer() && value->get<int64_t>() >= 0) {
      v = static_cast<uint64_t>(value->get<int64_t>());
    } else if (value->is_string()) {
      const std::string text = value->get<std::string>();
      auto parsed = pt::ParseUnsigned(text, Path(key), UINT64_MAX);
      if (!parsed || text.rfind("0x", 0) != 0)
        return Fail(Where(key) + ": expected a number or a 0x hex string");
      v = *parsed;
    } else {
      return Fail(Where(key) + ": expected an unsigned number");
    }
    if (v > max) return Fail(fmt::format("{}: {} is more than {}", Where(key), v, max));
    out = v;
    return {};
  }
  template <class T>
  Status Small(const char* key, T& out) const {
    uint64_t v = out;
    if (auto st = Unsigned(key, v, std::numeric_limits<T>::max()); !st) return st;
    out = static_cast<T>(v);
    return {};
  }
  // An id (cpu, pid, tid): a number >= -1.
  Status Id(const char* key, int32_t& out) const {
    const Json* value = Find(key);
    if (!value) return {};
    if (!value->is_number_integer() || value->get<int64_t>() < -1 ||
        value->get<int64_t>() > INT32_MAX)
      return Fail(Where(key) + ": expected an integer from -1 up");
    out = static_cast<int32_t>(value->get<int64_t>());
    return {};
  }
  Result<const Json*> Array(const char* key) const {
    const Json* value = Find(key);
    if (value && !value->is_array()) return Fail(Where(key) + ": expected an array");
    return value;
  }

 private:
  const Json& object_;
  std::string path_;
};

#define PTAR_TRY(expr)                             \
  do {                                             \
    if (auto st_ = (expr); !st_) return tl::unexpected(st_.error()); \
  } while (0)

Result<StreamEntry> ParseStream(const FieldReader& f) {
  PTAR_TRY(f.IsObject());
  StreamEntry s;
  PTAR_TRY(f.String("name", s.name, true));
  PTAR_TRY(f.String("format", s.format));
  PTAR_TRY(f.Id("cpu", s.cpu));
  PTAR_TRY(f.Id("pid", s.pid));
  PTAR_TRY(f.Id("tid", s.tid));
  PTAR_TRY(f.String("member", s.member, true));
  if (s.name.empty()) return Fail(f.Where("name") + ": empty");
  return s;
}

Result<ImageEntry> ParseImage(const FieldReader& f) {
  PTAR_TRY(f.IsObject());
  ImageEntry image;
  std::string kind;
  PTAR_TRY(f.String("kind", kind, true));
  if (kind == "elf") {
    image.kind = ImageEntry::Kind::kElf;
  } else if (kind == "raw") {
    image.kind = ImageEntry::Kind::kRaw;
  } else {
    return Fail(f.Where("kind") + ": '" + kind + "' is neither 'elf' nor 'raw'");
  }
  PTAR_TRY(f.String("path", image.path, true));
  PTAR_TRY(f.String("build_id", image.build_id));
  PTAR_TRY(f.Unsigned("base", image.base));
  PTAR_TRY(f.Unsigned("address", image.address));
  PTAR_TRY(f.Unsigned("file_offset", image.file_offset));
  PTAR_TRY(f.Unsigned("member_offset", image.member_offset));
  PTAR_TRY(f.Unsigned("size", image.size));
  PTAR_TRY(f.Id("pid", image.pid));
  PTAR_TRY(f.Unsigned("time_ns", image.time_ns));
  PTAR_TRY(f.String("member", image.member, true));
  return image;
}

Result<SidebandEntry> ParseSideband(const FieldReader& f) {
  PTAR_TRY(f.IsObject());
  SidebandEntry s;
  PTAR_TRY(f.String("kind", s.kind, true));
  PTAR_TRY(f.String("name", s.name));
  PTAR_TRY(f.String("member", s.member, true));
  return s;
}

Result<TriggerEntry> ParseTrigger(const FieldReader& f) {
  PTAR_TRY(f.IsObject());
  TriggerEntry t;
  PTAR_TRY(f.String("kind", t.kind));
  PTAR_TRY(f.String("label", t.label));
  PTAR_TRY(f.String("stream", t.stream));
  PTAR_TRY(f.Unsigned("offset", t.offset));
  PTAR_TRY(f.Unsigned("tsc", t.tsc));
  PTAR_TRY(f.Unsigned("time_ns", t.time_ns));
  PTAR_TRY(f.Unsigned("tid", t.tid));
  PTAR_TRY(f.Unsigned("latency_ns", t.latency_ns));
  return t;
}

template <class T, class Parse>
Status ParseList(const FieldReader& top, const char* key, Parse parse, std::vector<T>& out) {
  auto array = top.Array(key);
  if (!array) return tl::unexpected(array.error());
  if (!*array) return {};
  for (size_t i = 0; i < (*array)->size(); ++i) {
    auto entry = parse(FieldReader((**array)[i], fmt::format("{}[{}]", key, i)));
    if (!entry) return tl::unexpected(entry.error());
    out.push_back(std::move(*entry));
  }
  return {};
}

Status ParsePt(const FieldReader& f, pt::PtParams& params,
               std::map<std::string, uint64_t>& config) {
  PTAR_TRY(f.IsObject());
  if (const Json* cpu = f.Find("cpu")) {
    if (cpu->is_string() && cpu->get<std::string>() == "auto") {
      params.cpu_auto = true;
    } else {
      FieldReader c(*cpu, f.Path("cpu"));
      PTAR_TRY(c.IsObject());
      std::string vendor = "intel";
      PTAR_TRY(c.String("vendor", vendor));
      if (vendor != "intel") return Fail(c.Where("vendor") + ": only 'intel' is known");
      pt::PtCpu value;
      PTAR_TRY(c.Small("family", value.family));
      PTAR_TRY(c.Small("model", value.model));
      PTAR_TRY(c.Small("stepping", value.stepping));
      params.cpu = value;
    }
  }
  PTAR_TRY(f.Small("mtc_freq", params.mtc_freq));
  PTAR_TRY(f.Small("nom_freq", params.nom_freq));
  PTAR_TRY(f.Small("cpuid_0x15_eax", params.cpuid_0x15_eax));
  PTAR_TRY(f.Small("cpuid_0x15_ebx", params.cpuid_0x15_ebx));
  auto filters = f.Array("addr_filters");
  if (!filters) return tl::unexpected(filters.error());
  if (*filters) {
    for (size_t i = 0; i < (*filters)->size(); ++i) {
      FieldReader a((**filters)[i], fmt::format("{}[{}]", f.Path("addr_filters"), i));
      PTAR_TRY(a.IsObject());
      uint64_t n = 0;
      PTAR_TRY(a.Unsigned("n", n, 3));
      pt::AddrFilter filter;
      PTAR_TRY(a.Small("cfg", filter.cfg));
      PTAR_TRY(a.Unsigned("from", filter.a));
      PTAR_TRY(a.Unsigned("to", filter.b));
      params.filter[n] = filter;
    }
  }
  if (const Json* cfg = f.Find("config")) {
    if (!cfg->is_object()) return Fail(f.Where("config") + ": expected an object");
    FieldReader c(*cfg, f.Path("config"));
    for (auto it = cfg->begin(); it != cfg->end(); ++it) {
      uint64_t value = 0;
      PTAR_TRY(c.Unsigned(it.key().c_str(), value));
      config[it.key()] = value;
    }
  }
  return {};
}

}  // namespace

const char* ImageKindName(ImageEntry::Kind kind) {
  return kind == ImageEntry::Kind::kElf ? "elf" : "raw";
}

Json ManifestToJson(const Manifest& m) {
  Json j;
  j["tool"] = m.tool;
  j["created"] = m.created;
  j["source"] = {{"kind", m.source.kind}, {"paths", m.source.paths}, {"host", m.source.host}};
  Json pt;
  if (m.pt.cpu_auto) {
    pt["cpu"] = "auto";
  } else if (m.pt.cpu) {
    pt["cpu"] = {{"vendor", "intel"},
                 {"family", m.pt.cpu->family},
                 {"model", m.pt.cpu->model},
                 {"stepping", m.pt.cpu->stepping}};
  }
  pt["mtc_freq"] = m.pt.mtc_freq;
  pt["nom_freq"] = m.pt.nom_freq;
  pt["cpuid_0x15_eax"] = m.pt.cpuid_0x15_eax;
  pt["cpuid_0x15_ebx"] = m.pt.cpuid_0x15_ebx;
  Json filters = Json::array();
  for (unsigned n = 0; n < 4; ++n) {
    const pt::AddrFilter& f = m.pt.filter[n];
    if (f.cfg == 0 && f.a == 0 && f.b == 0) continue;
    filters.push_back({{"n", n}, {"cfg", f.cfg}, {"from", HexText(f.a)}, {"to", HexText(f.b)}});
  }
  pt["addr_filters"] = filters;
  Json config = Json::object();
  for (const auto& [name, value] : m.pt_config) config[name] = value;
  pt["config"] = config;
  j["pt"] = pt;
  if (m.clock)
    j["clock"] = {{"time_shift", m.clock->time_shift},
                  {"time_mult", m.clock->time_mult},
                  {"time_zero", m.clock->time_zero}};
  Json streams = Json::array();
  for (const StreamEntry& s : m.streams)
    streams.push_back({{"name", s.name}, {"format", s.format}, {"cpu", s.cpu}, {"pid", s.pid},
                       {"tid", s.tid}, {"member", s.member}});
  j["streams"] = streams;
  Json images = Json::array();
  for (const ImageEntry& i : m.images) {
    Json image = {{"kind", ImageKindName(i.kind)}, {"path", i.path}, {"build_id", i.build_id}};
    if (i.kind == ImageEntry::Kind::kElf) {
      image["base"] = HexText(i.base);
    } else {
      image["address"] = HexText(i.address);
      image["file_offset"] = i.file_offset;
      image["member_offset"] = i.member_offset;
    }
    image["size"] = i.size;
    image["pid"] = i.pid;
    if (i.time_ns != kUnknownTime) image["time_ns"] = i.time_ns;
    image["member"] = i.member;
    images.push_back(image);
  }
  j["images"] = images;
  Json sideband = Json::array();
  for (const SidebandEntry& s : m.sideband)
    sideband.push_back({{"kind", s.kind}, {"name", s.name}, {"member", s.member}});
  j["sideband"] = sideband;
  Json triggers = Json::array();
  for (const TriggerEntry& t : m.triggers) {
    Json trigger = {{"kind", t.kind}, {"label", t.label}, {"stream", t.stream},
                    {"offset", t.offset}};
    if (t.tsc != kUnknownTime) trigger["tsc"] = t.tsc;
    if (t.time_ns != kUnknownTime) trigger["time_ns"] = t.time_ns;
    if (t.tid != kUnknownTime) trigger["tid"] = t.tid;
    if (t.latency_ns != kUnknownTime) trigger["latency_ns"] = t.latency_ns;
    triggers.push_back(trigger);
  }
  j["triggers"] = triggers;
  return j;
}

Result<Manifest> ManifestFromJson(const Json& json) {
  FieldReader top(json, "");
  if (!json.is_object()) return Fail("the manifest is not a JSON object");
  Manifest m;
  PTAR_TRY(top.String("tool", m.tool));
  PTAR_TRY(top.String("created", m.created));
  if (const Json* source = top.Find("source")) {
    FieldReader s(*source, "source");
    PTAR_TRY(s.IsObject());
    PTAR_TRY(s.String("kind", m.source.kind));
    PTAR_TRY(s.String("host", m.source.host));
    auto paths = s.Array("paths");
    if (!paths) return tl::unexpected(paths.error());
    if (*paths) {
      for (size_t i = 0; i < (*paths)->size(); ++i) {
        const Json& p = (**paths)[i];
        if (!p.is_string())
          return Fail(fmt::format("field 'source.paths[{}]': expected a string", i));
        m.source.paths.push_back(p.get<std::string>());
      }
    }
  }
  if (const Json* pt = top.Find("pt")) PTAR_TRY(ParsePt(FieldReader(*pt, "pt"), m.pt, m.pt_config));
  if (const Json* clock = top.Find("clock")) {
    FieldReader c(*clock, "clock");
    PTAR_TRY(c.IsObject());
    ClockEntry entry;
    PTAR_TRY(c.Small("time_shift", entry.time_shift));
    PTAR_TRY(c.Small("time_mult", entry.time_mult));
    PTAR_TRY(c.Unsigned("time_zero", entry.time_zero));
    m.clock = entry;
  }
  PTAR_TRY(ParseList(top, "streams", ParseStream, m.streams));
  PTAR_TRY(ParseList(top, "images", ParseImage, m.images));
  PTAR_TRY(ParseList(top, "sideband", ParseSideband, m.sideband));
  PTAR_TRY(ParseList(top, "triggers", ParseTrigger, m.triggers));
  std::set<std::string> names;
  for (size_t i = 0; i < m.streams.size(); ++i) {
    if (!names.insert(m.streams[i].name).second)
      return Fail(fmt::format("field 'streams[{}].name': '{}' appears twice", i,
                              m.streams[i].name));
  }
  return m;
}

Status CheckMembersExist(const Manifest& manifest, const std::vector<MemberInfo>& members) {
  std::set<std::string> present;
  for (const MemberInfo& member : members) present.insert(member.name);
  auto check = [&](const std::string& member, const std::string& field) -> Status {
    if (present.count(member)) return {};
    return Fail(fmt::format("field '{}': member '{}' is not in the archive", field, member));
  };
  for (size_t i = 0; i < manifest.streams.size(); ++i)
    PTAR_TRY(check(manifest.streams[i].member, fmt::format("streams[{}].member", i)));
  for (size_t i = 0; i < manifest.images.size(); ++i)
    PTAR_TRY(check(manifest.images[i].member, fmt::format("images[{}].member", i)));
  for (size_t i = 0; i < manifest.sideband.size(); ++i)
    PTAR_TRY(check(manifest.sideband[i].member, fmt::format("sideband[{}].member", i)));
  return {};
}

}  // namespace ptprof::archive
