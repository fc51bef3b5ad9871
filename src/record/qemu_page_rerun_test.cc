// QEMU 7.2 announces an instruction that crosses a page at the end of its block, reported short,
// and then runs it in a block of its own: the recorder takes that as one execution, not as a
// signal that interrupted it (a synthetic stream: no QEMU needed).
#include <catch2/catch.hpp>

#include "decoders/pt/flow_session.h"
#include "sideband/image_testing.h"
#include "src/record/qemu_recorder.h"

using namespace ptprof;
using namespace ptprof::record;

namespace {

class InsnSink : public EventSink {
 public:
  void OnEvent(const TraceEvent& event) override {
    if (auto* insn = std::get_if<Instruction>(&event.body)) {
      ips.push_back(insn->ip);
      if (insn->iclass == BlockEnd::kInterrupt) ++async;  // an asynchronous branch after it
    }
    if (std::holds_alternative<TraceGap>(event.body)) ++gaps;
  }
  std::vector<uint64_t> ips;
  int gaps = 0;
  int async = 0;  // instructions an asynchronous branch ended
};

// The code from 0x1ff0 on, and its blocks as QEMU announces them.
constexpr uint64_t kBase = 0x1ff0;
struct Code {
  std::vector<uint8_t> bytes;
  QemuStream stream;
  // A block of `sizes` (as QEMU reports them) at `ip`, whose bytes (with the lookahead QEMU
  // gives) run `bytes` on.
  uint32_t Block(uint64_t ip, std::vector<uint8_t> sizes, uint16_t count) {
    QemuBlock block;
    block.vaddr = ip;
    block.first_size = static_cast<uint32_t>(stream.sizes.size());
    block.first_byte = static_cast<uint32_t>(stream.code.size());
    block.insns = static_cast<uint16_t>(sizes.size());
    block.bytes = count;
    block.defined = true;
    stream.sizes.insert(stream.sizes.end(), sizes.begin(), sizes.end());
    const size_t from = ip - kBase;
    stream.code.insert(stream.code.end(), bytes.begin() + static_cast<long>(from),
                       bytes.begin() + static_cast<long>(from + count));
    stream.blocks.push_back(block);
    return static_cast<uint32_t>(stream.blocks.size() - 1);
  }
};

// Decodes `trace` over `code` (mapped at kBase).
InsnSink Decode(const std::vector<uint8_t>& trace, const std::vector<uint8_t>& code) {
  const ImageSet images = testing::ImageWith(code, kBase);
  InsnSink sink;
  pt::FlowRequest request;
  request.insns = true;
  REQUIRE(pt::DecodeFlow(trace, images, request, sink));
  return sink;
}

// What the recorder counts of the blocks QEMU announced.
struct Counted {
  uint64_t crossings = 2;  // block ends reported short
  uint64_t reruns = 2;     // of them, run again in a block of their own
  uint64_t reps = 0;       // rep-string iterations folded
};

// Records thread 7 running the blocks `words` of `code`, where blocks end in an instruction that
// crosses a page, reported short, and run again in a block of their own: the recording and its
// decode hold the instructions that `ran`, each once, and no signal.
void CheckRecorded(Code& code, std::vector<uint32_t> words, const std::vector<uint64_t>& ran,
                   Counted counted = {}) {
  code.stream.complete = true;
  code.stream.threads.push_back({7, std::move(words)});
  QemuFlowOptions options;
  options.keep_ips = true;
  auto recording = EncodeQemuStream(code.stream, options);
  REQUIRE(recording);
  const QemuThreadTrace& thread = recording->threads.at(0);
  CHECK(thread.signals == 0);
  CHECK(thread.page_crossings == counted.crossings);
  CHECK(thread.page_reruns == counted.reruns);
  CHECK(thread.rep_repeats == counted.reps);
  CHECK(thread.ips == ran);
  CHECK(thread.insns == ran.size());
  const InsnSink sink = Decode(thread.pt, code.bytes);
  CHECK(sink.ips == ran);
  CHECK(sink.gaps == 0);
  CHECK(sink.async == 0);
}

}  // namespace

TEST_CASE("a branch that crosses a page, run again in a block of its own, is one execution") {
  // 0x1ff9 inc rax; 0x1ffc nop; 0x1ffd jne 0x1ff9 (6 bytes: up to 0x2003, across the page);
  // 0x2003 nop; 0x2004 jmp 0x1ff9.
  Code code;
  code.bytes.assign(0x20, 0xcc);
  const uint8_t loop[] = {0x48, 0xff, 0xc0, 0x90, 0x0f, 0x85, 0xf6, 0xff, 0xff, 0xff, 0x90, 0xeb, 0xf3};
  std::copy(std::begin(loop), std::end(loop), code.bytes.begin() + (0x1ff9 - kBase));
  // The jne as QEMU 7.2 announces it at the end of the first block: 3 bytes, those on the first
  // page; then on its own, whole.
  const uint32_t head = code.Block(0x1ff9, {3, 1, 3}, 10);
  const uint32_t jne = code.Block(0x1ffd, {6}, 6);
  const uint32_t tail = code.Block(0x2003, {1, 2}, 3);
  // Around the loop once (taken), then out (not taken) to the tail, whose jmp went nowhere yet
  // (not encoded).
  CheckRecorded(code, {head, jne, head, jne, tail},
                {0x1ff9, 0x1ffc, 0x1ffd, 0x1ff9, 0x1ffc, 0x1ffd, 0x2003});
}

TEST_CASE("an instruction that is not a branch, crossing a page and run again, is one execution") {
  // 0x1ffb nop; 0x1ffc mov rax, imm64 (10 bytes: up to 0x2006, across the page); 0x2006 nop;
  // 0x2007 jne 0x1ffb (a loop with a branch the trace decides, so that it ends).
  Code code;
  code.bytes.assign(0x20, 0xcc);
  const uint8_t body[] = {0x90, 0x48, 0xb8, 1, 2, 3, 4, 5, 6, 7, 8, 0x90, 0x75, 0xf2};
  std::copy(std::begin(body), std::end(body), code.bytes.begin() + (0x1ffb - kBase));
  const uint32_t head = code.Block(0x1ffb, {1, 4}, 11);
  const uint32_t mov = code.Block(0x1ffc, {10, 1, 2}, 13);
  CheckRecorded(code, {head, mov, head, mov},
                {0x1ffb, 0x1ffc, 0x2006, 0x2007, 0x1ffb, 0x1ffc, 0x2006});
}

TEST_CASE("a rep-string instruction that crosses a page runs again, then iterates on its own") {
  // 0x1ffe nop; 0x1fff rep movsb (2 bytes: up to 0x2001, across the page); 0x2001 jne 0x1ffe.
  Code code;
  code.bytes.assign(0x20, 0xcc);
  const uint8_t body[] = {0x90, 0xf3, 0xa4, 0x75, 0xfb};
  std::copy(std::begin(body), std::end(body), code.bytes.begin() + (0x1ffe - kBase));
  const uint32_t head = code.Block(0x1ffe, {1, 1}, 3);
  const uint32_t rep = code.Block(0x1fff, {2}, 2);
  const uint32_t tail = code.Block(0x2001, {2}, 2);
  // The rep movsb run again on its own, then two more iterations; around the loop once more, up
  // to the rep movsb, the last instruction (not a branch: encoded at the end).
  CheckRecorded(code, {head, rep, rep, rep, tail, head},
                {0x1ffe, 0x1fff, 0x2001, 0x1ffe, 0x1fff}, Counted{2, 1, 2});
}
