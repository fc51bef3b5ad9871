// Fuzz target: the .ptar reader. No crash, no hang, no allocation beyond what the input really
// decompresses to, whatever the bytes.
//  - Any input is opened as an archive and every member read (layout, header, manifest digest and
//    JSON, member frames, sizes, checksums), then parsed as a session manifest.
//  - An input starting with '{' is also taken as "manifest text, a NUL byte, member frames": the
//    target wraps the text in a valid header frame (with the right digest) and appends the rest, so
//    that mutated member tables (sizes, packed sizes, digests, names) reach the layout checks and
//    the decompressor, which the digest keeps them from in the first mode.
//  - The same bytes are parsed as manifest JSON directly.
#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

#include "src/archive/archive_reader.h"
#include "src/archive/archive_writer.h"
#include "src/archive/manifest.h"

namespace {

void ReadArchive(std::vector<uint8_t> bytes) {
  using namespace ptprof::archive;
  auto reader = ArchiveReader::FromBytes("fuzz.ptar", std::move(bytes));
  if (!reader) return;
  (void)reader->VerifyAll();
  auto manifest = ManifestFromJson(reader->manifest());
  if (manifest) (void)CheckMembersExist(*manifest, reader->members());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ptprof::archive;
  ReadArchive(std::vector<uint8_t>(data, data + size));
  if (size > 0 && data[0] == '{') {
    const uint8_t* nul = std::find(data, data + size, uint8_t{0});
    const std::span<const uint8_t> text(data, static_cast<size_t>(nul - data));
    PtarHeader header;
    header.manifest_size = text.size();
    header.manifest_sha256 = Sha256::Of(text);
    std::vector<uint8_t> first = EncodeHeader(header);
    first.insert(first.end(), text.begin(), text.end());
    if (auto frame = CompressFrame(first)) {
      if (nul != data + size) frame->insert(frame->end(), nul + 1, data + size);
      ReadArchive(std::move(*frame));
    }
  }
  auto json = nlohmann::ordered_json::parse(data, data + size, nullptr, false);
  if (!json.is_discarded()) {
    auto manifest = ManifestFromJson(json);
    if (manifest) (void)ManifestToJson(*manifest);
  }
  return 0;
}
