#include "src/cli/info_archive.h"

#include <cinttypes>
#include <cstdio>
#include <optional>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "decoders/pt/trace_census.h"
#include "src/archive/archive_reader.h"
#include "src/archive/manifest.h"
#include "src/cli/command.h"

namespace ptprof::cli {

namespace {

std::string Id(int32_t id) { return id == kUnknownId ? "-" : std::to_string(id); }

// What each Intel PT stream holds (packets, PSBs, TSC range, decode errors), in manifest order;
// nullopt for streams of other formats or that hold nothing decodable.
using Censuses = std::vector<std::optional<pt::TraceCensus>>;

Result<Censuses> TakeCensuses(const archive::ArchiveReader& reader, const archive::Manifest& m) {
  Censuses censuses;
  for (const auto& stream : m.streams) {
    censuses.emplace_back();
    if (stream.format != "intel_pt") continue;
    auto bytes = reader.Read(stream.member);
    if (!bytes) return tl::unexpected(bytes.error());
    if (bytes->empty()) continue;
    if (auto census = pt::TakeCensus(*bytes, m.pt)) censuses.back() = std::move(*census);
  }
  return censuses;
}

std::string CensusText(const pt::TraceCensus& c) {
  std::string text = fmt::format("{} packets, {} PSBs", c.packets, c.psb_offsets.size());
  if (c.has_tsc) text += fmt::format(", tsc {:#x}..{:#x}", c.first_tsc, c.last_tsc);
  return text + fmt::format(", {} decode errors", c.errors.size());
}

void PrintText(const std::string& input, const archive::ArchiveReader& reader,
               const archive::Manifest& m, const Censuses& censuses) {
  std::printf("input:     %s\n", input.c_str());
  std::printf("kind:      ptprof archive (format version %u, %" PRIu64 " bytes)\n",
              reader.header().format_version, reader.file_size());
  std::printf("made by:   %s at %s on %s\n", m.tool.c_str(), m.created.c_str(),
              m.source.host.c_str());
  std::printf("source:    %s", m.source.kind.c_str());
  for (const std::string& path : m.source.paths) std::printf(" %s", path.c_str());
  std::printf("\n");
  std::string cpu = "none";
  if (m.pt.cpu_auto) cpu = "auto";
  if (m.pt.cpu) cpu = fmt::format("{}/{}/{}", m.pt.cpu->family, m.pt.cpu->model, m.pt.cpu->stepping);
  std::printf("pt:        cpu %s, mtc-freq %u, nom-freq %u, cpuid-0x15.eax %u, cpuid-0x15.ebx %u\n",
              cpu.c_str(), m.pt.mtc_freq, m.pt.nom_freq, m.pt.cpuid_0x15_eax, m.pt.cpuid_0x15_ebx);
  for (unsigned n = 0; n < 4; ++n) {
    const auto& f = m.pt.filter[n];
    if (f.cfg != 0)
      std::printf("  addr-filter %u: cfg %u, %#" PRIx64 "-%#" PRIx64 "\n", n, f.cfg, f.a, f.b);
  }
  for (const auto& [name, value] : m.pt_config)
    std::printf("  %s = %#" PRIx64 "\n", name.c_str(), value);
  if (m.clock)
    std::printf("clock:     time_shift %u, time_mult %u, time_zero %" PRIu64 "\n",
                m.clock->time_shift, m.clock->time_mult, m.clock->time_zero);
  std::printf("streams:   %zu\n", m.streams.size());
  for (size_t i = 0; i < m.streams.size(); ++i) {
    const auto& s = m.streams[i];
    const archive::MemberInfo* member = reader.Find(s.member);
    std::printf("  %-10s %s, cpu %s, pid %s, tid %s, %" PRIu64 " bytes (%s)\n", s.name.c_str(),
                s.format.c_str(), Id(s.cpu).c_str(), Id(s.pid).c_str(), Id(s.tid).c_str(),
                member ? member->size : 0, s.member.c_str());
    if (censuses[i]) std::printf("  %-10s %s\n", "", CensusText(*censuses[i]).c_str());
  }
  std::printf("images:    %zu\n", m.images.size());
  for (const auto& i : m.images) {
    const std::string where = i.kind == archive::ImageEntry::Kind::kElf
                                  ? fmt::format("base {:#x}", i.base)
                                  : fmt::format("at {:#x}, file offset {:#x}", i.address,
                                                i.file_offset);
    std::printf("  %s %s, %s, %" PRIu64 " bytes, build-id %s (%s)\n", ImageKindName(i.kind),
                i.path.c_str(), where.c_str(), i.size,
                i.build_id.empty() ? "none" : i.build_id.c_str(), i.member.c_str());
  }
  std::printf("sideband:  %zu\n", m.sideband.size());
  for (const auto& s : m.sideband)
    std::printf("  %s %s (%s)\n", s.kind.c_str(), s.name.c_str(), s.member.c_str());
  PrintTriggerLines(m.triggers);
  std::printf("members:   %zu, every checksum verified\n", reader.members().size());
  for (const auto& member : reader.members())
    std::printf("  %#10" PRIx64 "  %10" PRIu64 " bytes  %10" PRIu64 " packed  %.16s  %s\n",
                member.offset, member.size, member.packed_size,
                archive::DigestHex(member.sha256).c_str(), member.name.c_str());
}

void PrintJson(const std::string& input, const archive::ArchiveReader& reader,
               const archive::Manifest& m, const Censuses& censuses) {
  nlohmann::ordered_json j;
  j["input"] = input;
  j["kind"] = "ptar";
  j["bytes"] = reader.file_size();
  j["format_version"] = reader.header().format_version;
  j["verified"] = true;
  nlohmann::ordered_json members = nlohmann::ordered_json::array();
  for (const auto& member : reader.members())
    members.push_back({{"name", member.name},
                       {"offset", member.offset},
                       {"size", member.size},
                       {"packed_size", member.packed_size},
                       {"sha256", archive::DigestHex(member.sha256)}});
  j["members"] = members;
  nlohmann::ordered_json streams = nlohmann::ordered_json::array();
  for (size_t i = 0; i < m.streams.size(); ++i) {
    nlohmann::ordered_json stream = {{"name", m.streams[i].name}};
    if (const archive::MemberInfo* member = reader.Find(m.streams[i].member))
      stream["bytes"] = member->size;
    if (const auto& c = censuses[i]) {
      stream["packets"] = c->packets;
      stream["psbs"] = c->psb_offsets.size();
      if (c->has_tsc) {
        stream["first_tsc"] = c->first_tsc;
        stream["last_tsc"] = c->last_tsc;
      }
      stream["errors"] = c->errors.size();
    }
    streams.push_back(stream);
  }
  j["streams"] = streams;
  j["manifest"] = reader.manifest();
  std::printf("%s\n", j.dump().c_str());
}

}  // namespace

void PrintTriggerLines(const std::vector<archive::TriggerEntry>& triggers) {
  std::printf("triggers:  %zu\n", triggers.size());
  for (const auto& t : triggers) {
    std::printf("  %s %s, stream %s, offset %#" PRIx64, t.kind.c_str(), t.label.c_str(),
                t.stream.c_str(), t.offset);
    if (t.tid != kUnknownTime) std::printf(", tid %" PRIu64, t.tid);
    if (t.time_ns != kUnknownTime) std::printf(", time %" PRIu64 " ns", t.time_ns);
    if (t.latency_ns != kUnknownTime) std::printf(", latency %" PRIu64 " ns", t.latency_ns);
    std::printf("\n");
  }
}

int RunArchiveInfo(const std::string& input, const std::string& format) {
  auto reader = archive::ArchiveReader::Open(input);
  if (!reader) return ReportBadInput(reader.error().message);
  auto manifest = archive::ManifestFromJson(reader->manifest());
  if (!manifest) return ReportBadInput(input + ": offset 0x0: manifest: " + manifest.error().message);
  if (auto st = archive::CheckMembersExist(*manifest, reader->members()); !st)
    return ReportBadInput(input + ": offset 0x0: manifest: " + st.error().message);
  if (auto st = reader->VerifyAll(); !st) return ReportBadInput(st.error().message);
  auto censuses = TakeCensuses(*reader, *manifest);
  if (!censuses) return ReportBadInput(censuses.error().message);
  if (format == "json")
    PrintJson(input, *reader, *manifest, *censuses);
  else
    PrintText(input, *reader, *manifest, *censuses);
  return kExitOk;
}

}  // namespace ptprof::cli
