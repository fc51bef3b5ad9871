#pragma once
// EventWriter prints the model's event stream as text (one line per block, instruction or event,
// with symbols and disassembly) or as JSON Lines (the records documented in docs/formats.md).
// It knows nothing about where the events came from: symbolisation and disassembly are injected.
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "src/model/block_batch.h"
#include "src/model/parted_sink.h"
#include "src/report/line_cache.h"
#include "src/report/spare_pool.h"

namespace ptprof {

enum class EventFormat { kText, kJsonl };

struct EventWriterOptions {
  EventFormat format = EventFormat::kText;
  // "main+0x13" for an address, or "" when no symbol covers it.
  std::function<std::string(uint64_t ip)> symbolize;
  // Disassembly of one instruction in Intel syntax, or "" when unavailable.
  std::function<std::string(const Instruction& insn)> disassemble;
  bool show_cpu = false;
};

// In parts (src/model/parted_sink.h), each part writes into memory on its own thread and Fold
// writes its text out in order: the same bytes as one writer, the formatting shared between the
// threads. `symbolize` and `disassemble` are then called on several threads at once.
class EventWriter : public PartedSink {
 public:
  EventWriter(std::FILE* out, EventWriterOptions options);
  ~EventWriter() override;
  void OnEvent(const TraceEvent& event) override;
  void OnBlocks(const BlockBatch& batch) override;
  void OnEnd() override;

  std::unique_ptr<EventSink> NewPart() const override;
  void Fold(std::unique_ptr<EventSink> part) override;
  // Parts of 32 KiB of trace: on the densest trace measured (7 blocks a byte) about 15 MB of
  // text each.
  uint64_t PartBytes() const override { return 32u << 10; }

 private:
  std::string Symbol(uint64_t ip) const;
  // "enabled ip 0x401000 <_start>", "exec_mode 64-bit", "paging cr3 0x1000": a non-flow event.
  std::string EventText(const TraceEvent& event) const;
  void WriteText(const TraceEvent& event);
  void WriteJsonl(const TraceEvent& event);
  // A block, in either format; a text line's cpu and time.
  void WriteBlock(const EventHeader& h, const ExecBlock& b);
  void WriteTextPrefix(const EventHeader& h);
  void Flush();

  static constexpr size_t kFlushBytes = 1 << 16;

  // What the parts of a writer pass on to each other: the caches of lines (warm from one part
  // to the next on a thread) and the buffers of text the fold has written out.
  struct Spares;

  std::FILE* out_;  // null for a part's writer
  EventWriterOptions options_;
  std::string buffer_;  // text waiting to be written
  // The lines kept: a block's or an instruction's text line without its cpu and time, or its
  // JSON record's head.
  struct KeptLines {
    LineCache blocks, instructions;
  };
  std::unique_ptr<KeptLines> lines_ = std::make_unique<KeptLines>();
  // JSONL: the header fields of the last block (and its end), as spelled for it.
  EventHeader tail_;
  std::string tail_text_;
  // A part's writer: where full buffers go as they are (moved, not copied into out_).
  std::vector<std::string>* spill_ = nullptr;
  std::shared_ptr<Spares> spares_;
  friend class WriterPart;
};

// The JSONL record of one event, without the trailing newline (exposed for tests and other writers).
std::string EventToJson(const TraceEvent& event);
// The same record with its newline, appended to `out`.
void AppendEventJson(std::string& out, const TraceEvent& event);

// JSONL's name for an instruction's effect on control flow ("call", "jump", "other", ...).
const char* InsnClassName(BlockEnd iclass);

}  // namespace ptprof
