// swbt_check ARCHIVE: checks every burst of a `ptprof record --backend swbt` archive against the
// binaries on this machine (burst_check.h) and prints a JSON summary with the tracer's counters.
// Exit 0 when every checked branch is consistent, 1 otherwise or on bad input. A test helper.
#include <cstdio>
#include <fstream>
#include <map>

#include <nlohmann/json.hpp>

#include "src/archive/archive_reader.h"
#include "src/archive/manifest.h"
#include "src/record/swbt/burst_check.h"

using namespace ptprof;

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: swbt_check ARCHIVE.ptar\n");
    return 2;
  }
  auto reader = archive::ArchiveReader::Open(argv[1]);
  if (!reader) {
    std::fprintf(stderr, "swbt_check: %s\n", reader.error().message.c_str());
    return 1;
  }
  auto manifest = archive::ManifestFromJson(reader->manifest());
  if (!manifest || manifest->source.kind != kSwbtSourceKind) {
    std::fprintf(stderr, "swbt_check: %s: not an archive of the swbt backend\n", argv[1]);
    return 1;
  }
  std::map<std::string, std::string> maps_text;  // "pid12" -> start and exit maps
  nlohmann::ordered_json counters;
  for (const auto& entry : manifest->sideband) {
    auto bytes = reader->Read(entry.member);
    if (!bytes) continue;
    std::string text(bytes->begin(), bytes->end());
    if (entry.kind == kSwbtMapsKind) {
      const std::string stem = entry.name.substr(0, entry.name.rfind('.'));
      maps_text[stem] = text + maps_text[stem];  // exit before start: later mappings first
    } else if (entry.kind == kSwbtCountersKind) {
      counters = nlohmann::ordered_json::parse(text, nullptr, false);
    }
  }
  auto read_file = [](const std::string& path, uint64_t offset, size_t size) {
    std::vector<uint8_t> bytes(size);
    std::ifstream in(path, std::ios::binary);
    in.seekg(static_cast<std::streamoff>(offset));
    in.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(size));
    bytes.resize(static_cast<size_t>(in.gcount()));
    return bytes;
  };
  swbt::BurstCheckSummary summary;
  nlohmann::ordered_json reasons = nlohmann::ordered_json::object();
  for (const auto& entry : manifest->sideband) {
    if (entry.kind != kSwbtBurstsKind) continue;
    auto bytes = reader->Read(entry.member);
    if (!bytes) {
      std::fprintf(stderr, "swbt_check: %s\n", bytes.error().message.c_str());
      return 1;
    }
    std::vector<SwbtBurst> bursts;
    auto header = ForEachSwbtBurst(*bytes, entry.member, [&](const SwbtBurst& b) {
      bursts.push_back(b);
      const char* name = SwbtEndReasonName(b.reason);
      reasons[name] = reasons.value(name, 0) + 1;
    });
    if (!header) {
      std::fprintf(stderr, "swbt_check: %s\n", header.error().message.c_str());
      return 1;
    }
    swbt::CheckBursts(bursts, swbt::ParseProcMaps(maps_text[entry.name]), read_file, summary);
  }
  nlohmann::ordered_json out;
  out["bursts"] = summary.bursts;
  out["branches"] = summary.branches;
  out["verified"] = summary.verified;
  out["unverifiable"] = summary.unverifiable;
  out["bad"] = summary.bad;
  out["counterexamples"] = summary.counterexamples;
  out["end_reasons"] = reasons;
  out["counters"] = counters.is_object() ? counters["total"] : nlohmann::ordered_json();
  std::printf("%s\n", out.dump().c_str());
  return summary.bad == 0 ? 0 : 1;
}
