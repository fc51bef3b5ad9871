#include "src/record/qemu_stream.h"

#include <cstring>

#include <catch2/catch.hpp>

#include "src/record/qemu/stream_format.h"

using namespace ptprof::record;
namespace sf = ptprof::record::qemu_stream;

namespace {

void Chunk(std::vector<uint8_t>& out, uint32_t type, uint32_t tid, const std::vector<uint8_t>& p) {
  sf::ChunkHeader header{type, tid, static_cast<uint32_t>(p.size()), 0};
  const auto* h = reinterpret_cast<const uint8_t*>(&header);
  out.insert(out.end(), h, h + sizeof header);
  out.insert(out.end(), p.begin(), p.end());
}

std::vector<uint8_t> Words(std::initializer_list<uint32_t> words) {
  std::vector<uint8_t> out(words.size() * 4);
  std::memcpy(out.data(), std::data(words), out.size());
  return out;
}

std::vector<uint8_t> MakeStream() {
  std::vector<uint8_t> s(sf::kMagic, sf::kMagic + 8);
  Chunk(s, sf::kChunkInfo, 7, {'p', 'i', 'd', ' ', '7', '\n'});
  // block 0 at 0x1000: nop; ret
  sf::BlockDef def{0, 2, 2, 0x1000};
  std::vector<uint8_t> blocks(sizeof def);
  std::memcpy(blocks.data(), &def, sizeof def);
  blocks.insert(blocks.end(), {1, 1, 0x90, 0xc3});
  Chunk(s, sf::kChunkBlocks, 7, blocks);
  Chunk(s, sf::kChunkExec, 7, Words({0, 0}));
  Chunk(s, sf::kChunkExec, 8, Words({0}));
  Chunk(s, sf::kChunkExec, 7, Words({0}));
  Chunk(s, sf::kChunkEnd, 7, {'b', ' ', '1', '\n'});
  return s;
}

}  // namespace

TEST_CASE("a QEMU stream reads into blocks, threads and info") {
  auto stream = ParseQemuStream(MakeStream(), "s");
  REQUIRE(stream);
  CHECK(stream->complete);
  CHECK(stream->info.at("pid") == "7");
  REQUIRE(stream->blocks.size() == 1);
  CHECK(stream->blocks[0].vaddr == 0x1000);
  CHECK(stream->CodeOf(stream->blocks[0])[1] == 0xc3);
  REQUIRE(stream->threads.size() == 2);
  CHECK(stream->threads[0].tid == 7);
  CHECK(stream->threads[0].words.size() == 3);
  CHECK(stream->threads[1].words.size() == 1);
}

TEST_CASE("a QEMU stream cut short keeps its whole chunks and says where it ends") {
  auto bytes = MakeStream();
  bytes.resize(bytes.size() - 2);
  auto stream = ParseQemuStream(bytes, "s");
  REQUIRE(stream);
  CHECK_FALSE(stream->complete);
  CHECK(stream->note.find("s: offset 0x") == 0);
  CHECK(stream->threads[0].words.size() == 3);
}

TEST_CASE("a file that is not a QEMU stream is rejected with its name") {
  auto stream = ParseQemuStream({1, 2, 3}, "x.bin");
  REQUIRE_FALSE(stream);
  CHECK(stream.error().message == "x.bin: offset 0x0: not a ptprof QEMU plugin stream (bad magic)");
}
