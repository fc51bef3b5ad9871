// Fuzz target: the .ptar reader. Any byte string is opened as an archive and every member read
// (layout, header, manifest digest and JSON, member frames, sizes, checksums), then parsed as a
// session manifest; the same bytes are also parsed as manifest JSON directly, since the digest
// keeps mutated manifests from getting that far. No crash, no hang, no allocation beyond what the
// input really decompresses to.
#include <cstdint>
#include <vector>

#include "src/archive/archive_reader.h"
#include "src/archive/manifest.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ptprof::archive;
  auto reader = ArchiveReader::FromBytes("fuzz.ptar", std::vector<uint8_t>(data, data + size));
  if (reader) {
    (void)reader->VerifyAll();
    auto manifest = ManifestFromJson(reader->manifest());
    if (manifest) (void)CheckMembersExist(*manifest, reader->members());
  }
  auto json = nlohmann::ordered_json::parse(data, data + size, nullptr, false);
  if (!json.is_discarded()) {
    auto manifest = ManifestFromJson(json);
    if (manifest) (void)ManifestToJson(*manifest);
  }
  return 0;
}
