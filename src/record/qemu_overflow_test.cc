// Lost plugin words become an OVF packet: the decoder reports the overflow as a gap and resumes
// exactly where execution went on (a synthetic stream: no QEMU needed).
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>

#include <catch2/catch.hpp>

#include "decoders/pt/flow_session.h"
#include "src/record/qemu/stream_format.h"
#include "src/record/qemu_recorder.h"

using namespace ptprof;
using namespace ptprof::record;
namespace sf = ptprof::record::qemu_stream;

namespace {

class FlowSink : public EventSink {
 public:
  void OnEvent(const TraceEvent& event) override {
    if (auto* insn = std::get_if<Instruction>(&event.body)) (gaps.empty() ? before : after).push_back(insn->ip);
    if (auto* gap = std::get_if<TraceGap>(&event.body)) gaps.push_back(*gap);
  }
  std::vector<uint64_t> before, after;  // instructions before and after the first gap
  std::vector<TraceGap> gaps;
};

// Block 0 at 0x1000: nop; inc rax; jne 0x1000. Block 1 at 0x1006: nop; jmp 0x1000.
void DefineBlocks(QemuStream& stream) {
  const uint8_t code0[] = {0x90, 0x48, 0xff, 0xc0, 0x75, 0xfa};
  const uint8_t code1[] = {0x90, 0xeb, 0xf7};
  stream.blocks.resize(2);
  stream.blocks[0] = {0x1000, 0, 0, 3, sizeof code0, true};
  stream.blocks[1] = {0x1006, 3, sizeof code0, 2, sizeof code1, true};
  stream.sizes = {1, 3, 2, 1, 2};
  stream.code.assign(code0, code0 + sizeof code0);
  stream.code.insert(stream.code.end(), code1, code1 + sizeof code1);
}

}  // namespace

TEST_CASE("words the plugin lost become OVF + FUP: the decoder reports a gap and resynchronises") {
  QemuStream stream;
  DefineBlocks(stream);
  stream.complete = true;
  // A A A B A A <lost> A A B A
  stream.threads.push_back({7, {0, 0, 0, 1, 0, 0, sf::kTagLost, 123, 0, 0, 1, 0}});
  QemuFlowOptions options;
  options.keep_ips = true;
  auto recording = EncodeQemuStream(stream, options);
  REQUIRE(recording);
  const QemuThreadTrace& thread = recording->threads.at(0);
  CHECK(thread.overflows == 1);
  CHECK(thread.lost_words == 123);
  CHECK(thread.stats.overflows == 1);

  char code_file[] = "/tmp/ptprof-ovf-code-XXXXXX";
  const int fd = mkstemp(code_file);
  REQUIRE(fd >= 0);
  close(fd);
  {
    std::ofstream out(code_file, std::ios::binary);
    out.write(reinterpret_cast<const char*>(stream.code.data()),
              static_cast<std::streamsize>(stream.code.size()));
  }
  ImageSet images;
  REQUIRE(images.AddRaw(RawImageSpec{code_file, 0, stream.code.size(), 0x1000}));
  FlowSink sink;
  pt::FlowRequest request;
  request.insns = true;
  REQUIRE(pt::DecodeFlow(thread.pt, images, request, sink));
  std::remove(code_file);

  REQUIRE(sink.gaps.size() == 1);
  CHECK(sink.gaps[0].reason == GapReason::kOverflow);
  CHECK(sink.gaps[0].has_ip);
  CHECK(sink.gaps[0].ip == 0x1000);
  // Before the loss, A A A B A ran, and the last A up to its branch, whose outcome was lost. The
  // decoder learns of the overflow when it asks for that outcome, or earlier (libipt reports the
  // OVF as soon as it is the next packet): what it reports is a prefix of what ran.
  const std::vector<uint64_t> a = {0x1000, 0x1001, 0x1004}, b = {0x1006, 0x1007};
  std::vector<uint64_t> before;
  for (const auto* part : {&a, &a, &a, &b, &a}) before.insert(before.end(), part->begin(), part->end());
  CHECK(sink.before.size() >= before.size());
  before.insert(before.end(), {0x1000, 0x1001});
  REQUIRE(sink.before.size() <= before.size());
  CHECK(std::equal(sink.before.begin(), sink.before.end(), before.begin()));
  // After it: exactly what ran, A A B and the last A, whose final branch nobody saw go anywhere.
  std::vector<uint64_t> after;
  for (const auto* part : {&a, &a, &b}) after.insert(after.end(), part->begin(), part->end());
  after.insert(after.end(), {0x1000, 0x1001});
  CHECK(sink.after == after);
  // The encoder encoded everything that ran but the lost branch.
  std::vector<uint64_t> all = before;
  all.insert(all.end(), after.begin(), after.end());
  CHECK(thread.ips == all);
}

TEST_CASE("a stream read piece by piece gives the same as one read at once") {
  // The exec chunks of thread 7, split at every possible byte.
  std::vector<uint8_t> s(sf::kMagic, sf::kMagic + 8);
  auto chunk = [&](uint32_t type, uint32_t tid, const void* p, size_t n) {
    sf::ChunkHeader header{type, tid, static_cast<uint32_t>(n), 0};
    const auto* h = reinterpret_cast<const uint8_t*>(&header);
    s.insert(s.end(), h, h + sizeof header);
    s.insert(s.end(), static_cast<const uint8_t*>(p), static_cast<const uint8_t*>(p) + n);
  };
  sf::BlockDef def{0, 2, 2, 0x1000};
  uint8_t blocks[sizeof def + 4];
  std::memcpy(blocks, &def, sizeof def);
  std::memcpy(blocks + sizeof def, "\x01\x01\x90\xc3", 4);
  chunk(sf::kChunkBlocks, 7, blocks, sizeof blocks);
  const uint32_t words[] = {0, 0, 0};
  chunk(sf::kChunkExec, 7, words, sizeof words);
  chunk(sf::kChunkExec, 7, words, 4);
  chunk(sf::kChunkEnd, 7, "x 1\n", 4);
  for (size_t step = 1; step < 9; ++step) {
    QemuStreamReader reader("s");
    std::vector<uint32_t> got;
    auto on_exec = [&](uint32_t, const uint32_t* w, size_t n) -> Status {
      got.insert(got.end(), w, w + n);
      return {};
    };
    std::vector<uint8_t> pending;
    for (size_t at = 0; at < s.size(); at += step) {
      pending.insert(pending.end(), s.begin() + static_cast<long>(at),
                     s.begin() + static_cast<long>(std::min(s.size(), at + step)));
      auto consumed = reader.Consume(pending.data(), pending.size(), on_exec);
      REQUIRE(consumed);
      pending.erase(pending.begin(), pending.begin() + static_cast<long>(*consumed));
    }
    reader.Finish(pending.size());
    CHECK(got.size() == 4);
    CHECK(reader.stream().complete);
    CHECK(reader.stream().note.empty());
    CHECK(reader.stream().blocks.at(0).vaddr == 0x1000);
  }
}
