#pragma once
// QemuStream answers "what did the QEMU plugin see?": it reads the plugin's binary stream
// (src/record/qemu/stream_format.h, docs/formats/qemu-stream.md) into the translated blocks (by
// id), each thread's execution words in order, the sideband lines and the program information.
// A stream cut short (full disk, killed emulator) reads up to its last whole chunk, with a note.
// QemuStreamReader reads the same stream piece by piece, while the emulator still writes it, and
// hands each exec chunk to the caller instead of keeping it: memory stays bounded by the code.
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "src/model/result.h"

namespace ptprof::record {

struct QemuBlock {
  uint64_t vaddr = 0;
  uint32_t first_size = 0;   // index of the first instruction size in QemuStream::sizes
  uint32_t first_byte = 0;   // index of the first code byte in QemuStream::code
  uint16_t insns = 0;
  uint16_t bytes = 0;
  bool defined = false;
};

struct QemuThread {
  uint32_t tid = 0;
  std::vector<uint32_t> words;  // block ids and event tags (stream_format.h), in execution order
};

struct QemuStream {
  std::vector<QemuBlock> blocks;  // by id
  std::vector<uint8_t> sizes;     // instruction sizes of every block
  std::vector<uint8_t> code;      // code bytes of every block
  std::vector<QemuThread> threads;  // in the order they first appear (ParseQemuStream only)
  std::vector<std::string> sideband;  // "mmap ..." lines
  std::map<std::string, std::string> info;  // from the info chunk
  std::map<std::string, std::string> end;   // from the end chunk; empty when the stream has none
  bool complete = false;  // the end chunk was seen
  std::string note;       // why the stream is incomplete, when it is

  const uint8_t* CodeOf(const QemuBlock& block) const { return code.data() + block.first_byte; }
  const uint8_t* SizesOf(const QemuBlock& block) const { return sizes.data() + block.first_size; }
};

// Reads a stream incrementally. Block definitions, sideband, info and end go into stream();
// every exec chunk's words go to the handler given to Consume, in stream order.
class QemuStreamReader {
 public:
  using ExecHandler = std::function<Status(uint32_t tid, const uint32_t* words, size_t count)>;
  explicit QemuStreamReader(std::string name) : name_(std::move(name)) {}

  // Reads the whole chunks at the start of [data, data + size) (the bytes after everything
  // consumed so far) and returns how many bytes it consumed; a partial chunk is left for later.
  Result<size_t> Consume(const uint8_t* data, size_t size, const ExecHandler& on_exec);
  // The stream has ended with `leftover` unconsumed bytes: notes why it is incomplete.
  void Finish(size_t leftover);
  // Bytes consumed so far (the offset of the next chunk in the stream).
  uint64_t offset() const { return offset_; }

  QemuStream& stream() { return stream_; }

 private:
  Status ReadBlocks(const uint8_t* payload, size_t size, uint64_t payload_at);

  std::string name_;
  QemuStream stream_;
  uint64_t offset_ = 0;
  std::vector<uint32_t> words_;  // scratch: an exec chunk's words, aligned
};

// Reads a whole stream from `bytes`; `name` is used in error messages ("FILE: offset 0x..: ...").
Result<QemuStream> ParseQemuStream(const std::vector<uint8_t>& bytes, const std::string& name);

}  // namespace ptprof::record
