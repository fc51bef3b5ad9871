#pragma once
// QemuStream answers "what did the QEMU plugin see?": it reads the plugin's binary stream
// (src/record/qemu/stream_format.h, docs/formats/qemu-stream.md) into the translated blocks (by
// id), each thread's execution words in order, the sideband lines and the program information.
// A stream cut short (full disk, killed emulator) reads up to its last whole chunk, with a note.
#include <cstdint>
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
  std::vector<QemuThread> threads;  // in the order they first appear
  std::vector<std::string> sideband;  // "mmap ..." lines
  std::map<std::string, std::string> info;  // from the info chunk
  std::map<std::string, std::string> end;   // from the end chunk; empty when the stream has none
  bool complete = false;  // the end chunk was seen
  std::string note;       // why the stream is incomplete, when it is

  const uint8_t* CodeOf(const QemuBlock& block) const { return code.data() + block.first_byte; }
  const uint8_t* SizesOf(const QemuBlock& block) const { return sizes.data() + block.first_size; }
};

// Reads a stream from `bytes`; `name` is used in error messages ("FILE: offset 0x..: ...").
Result<QemuStream> ParseQemuStream(const std::vector<uint8_t>& bytes, const std::string& name);

}  // namespace ptprof::record
