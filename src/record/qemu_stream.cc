#include "src/record/qemu_stream.h"

#include <cstring>

#include <fmt/format.h>

#include "src/record/qemu/stream_format.h"

namespace ptprof::record {

namespace {

namespace sf = qemu_stream;

void ParseText(const uint8_t* data, size_t size, std::map<std::string, std::string>& out) {
  std::string text(reinterpret_cast<const char*>(data), size);
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(at, end - at);
    size_t space = line.find(' ');
    if (space != std::string::npos) out[line.substr(0, space)] = line.substr(space + 1);
    at = end + 1;
  }
}

}  // namespace

Result<QemuStream> ParseQemuStream(const std::vector<uint8_t>& bytes, const std::string& name) {
  if (bytes.size() < sizeof sf::kMagic || std::memcmp(bytes.data(), sf::kMagic, sizeof sf::kMagic))
    return Fail(name + ": offset 0x0: not a ptprof QEMU plugin stream (bad magic)");
  QemuStream stream;
  std::map<uint32_t, size_t> thread_index;
  size_t at = sizeof sf::kMagic;
  while (at < bytes.size()) {
    sf::ChunkHeader header;
    if (bytes.size() - at < sizeof header) {
      stream.note = fmt::format("{}: offset {:#x}: the stream ends inside a chunk header", name, at);
      break;
    }
    std::memcpy(&header, bytes.data() + at, sizeof header);
    const size_t payload_at = at + sizeof header;
    if (bytes.size() - payload_at < header.size) {
      stream.note = fmt::format("{}: offset {:#x}: the stream ends inside a chunk ({} of {} bytes)",
                                name, at, bytes.size() - payload_at, header.size);
      break;
    }
    const uint8_t* payload = bytes.data() + payload_at;
    switch (header.type) {
      case sf::kChunkInfo:
        ParseText(payload, header.size, stream.info);
        break;
      case sf::kChunkEnd:
        ParseText(payload, header.size, stream.end);
        stream.complete = true;
        break;
      case sf::kChunkSideband: {
        std::string text(reinterpret_cast<const char*>(payload), header.size);
        size_t line_at = 0;
        while (line_at < text.size()) {
          size_t end = text.find('\n', line_at);
          if (end == std::string::npos) end = text.size();
          stream.sideband.push_back(text.substr(line_at, end - line_at));
          line_at = end + 1;
        }
        break;
      }
      case sf::kChunkBlocks: {
        size_t p = 0;
        while (p < header.size) {
          sf::BlockDef def;
          if (header.size - p < sizeof def)
            return Fail(fmt::format("{}: offset {:#x}: block definition cut short", name,
                                    payload_at + p));
          std::memcpy(&def, payload + p, sizeof def);
          const size_t need = sizeof def + def.insns + def.bytes;
          if (header.size - p < need)
            return Fail(fmt::format("{}: offset {:#x}: block {} runs past its chunk", name,
                                    payload_at + p, def.id));
          if (def.id >= stream.blocks.size()) stream.blocks.resize(def.id + 1);
          QemuBlock& block = stream.blocks[def.id];
          if (block.defined)
            return Fail(fmt::format("{}: offset {:#x}: block {} defined twice", name,
                                    payload_at + p, def.id));
          block.vaddr = def.vaddr;
          block.insns = def.insns;
          block.bytes = def.bytes;
          block.first_size = static_cast<uint32_t>(stream.sizes.size());
          block.first_byte = static_cast<uint32_t>(stream.code.size());
          block.defined = true;
          const uint8_t* sizes = payload + p + sizeof def;
          stream.sizes.insert(stream.sizes.end(), sizes, sizes + def.insns);
          stream.code.insert(stream.code.end(), sizes + def.insns, sizes + def.insns + def.bytes);
          uint32_t total = 0;
          for (uint16_t i = 0; i < def.insns; ++i) total += sizes[i];
          if (total > def.bytes + 15u || (def.insns > 0 && total - sizes[def.insns - 1] >= def.bytes))
            return Fail(fmt::format("{}: offset {:#x}: block {}: instruction sizes add up to {} "
                                    "bytes, the block has {} bytes of code", name, payload_at + p, def.id,
                                    total, def.bytes));
          p += need;
        }
        break;
      }
      case sf::kChunkExec: {
        if (header.size % 4 != 0)
          return Fail(fmt::format("{}: offset {:#x}: exec chunk of {} bytes (not whole words)",
                                  name, at, header.size));
        auto [it, added] = thread_index.try_emplace(header.tid, stream.threads.size());
        if (added) stream.threads.push_back(QemuThread{header.tid, {}});
        auto& words = stream.threads[it->second].words;
        const size_t old = words.size();
        words.resize(old + header.size / 4);
        std::memcpy(words.data() + old, payload, header.size);
        break;
      }
      default:
        return Fail(fmt::format("{}: offset {:#x}: unknown chunk type {}", name, at, header.type));
    }
    at = payload_at + header.size;
  }
  if (!stream.complete && stream.note.empty())
    stream.note = name + ": the stream has no end chunk (the emulator did not exit normally)";
  return stream;
}

}  // namespace ptprof::record
