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

void ParseLines(const uint8_t* data, size_t size, std::vector<std::string>& out) {
  std::string text(reinterpret_cast<const char*>(data), size);
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    out.push_back(text.substr(at, end - at));
    at = end + 1;
  }
}

}  // namespace

Status QemuStreamReader::ReadBlocks(const uint8_t* payload, size_t size, uint64_t payload_at) {
  size_t p = 0;
  while (p < size) {
    sf::BlockDef def;
    if (size - p < sizeof def)
      return Fail(fmt::format("{}: offset {:#x}: block definition cut short", name_,
                              payload_at + p));
    std::memcpy(&def, payload + p, sizeof def);
    const size_t need = sizeof def + def.insns + def.bytes;
    if (size - p < need)
      return Fail(fmt::format("{}: offset {:#x}: block {} runs past its chunk", name_,
                              payload_at + p, def.id));
    if (def.id >= stream_.blocks.size()) stream_.blocks.resize(def.id + 1);
    QemuBlock& block = stream_.blocks[def.id];
    if (block.defined)
      return Fail(fmt::format("{}: offset {:#x}: block {} defined twice", name_, payload_at + p,
                              def.id));
    const uint8_t* sizes = payload + p + sizeof def;
    uint32_t total = 0;
    for (uint16_t i = 0; i < def.insns; ++i) total += sizes[i];
    if (total > def.bytes + 15u || (def.insns > 0 && total - sizes[def.insns - 1] >= def.bytes))
      return Fail(fmt::format("{}: offset {:#x}: block {}: instruction sizes add up to {} bytes, "
                              "the block has {} bytes of code", name_, payload_at + p, def.id,
                              total, def.bytes));
    block.vaddr = def.vaddr;
    block.insns = def.insns;
    block.bytes = def.bytes;
    block.first_size = static_cast<uint32_t>(stream_.sizes.size());
    block.first_byte = static_cast<uint32_t>(stream_.code.size());
    block.defined = true;
    stream_.sizes.insert(stream_.sizes.end(), sizes, sizes + def.insns);
    stream_.code.insert(stream_.code.end(), sizes + def.insns, sizes + def.insns + def.bytes);
    p += need;
  }
  return {};
}

Result<size_t> QemuStreamReader::Consume(const uint8_t* data, size_t size,
                                         const ExecHandler& on_exec) {
  size_t at = 0;
  if (offset_ == 0) {
    if (size < sizeof sf::kMagic) return 0;
    if (std::memcmp(data, sf::kMagic, sizeof sf::kMagic))
      return Fail(name_ + ": offset 0x0: not a ptprof QEMU plugin stream (bad magic)");
    at = sizeof sf::kMagic;
  }
  while (size - at >= sizeof(sf::ChunkHeader)) {
    sf::ChunkHeader header;
    std::memcpy(&header, data + at, sizeof header);
    const size_t payload_at = at + sizeof header;
    if (size - payload_at < header.size) break;  // the rest of the chunk comes later
    const uint8_t* payload = data + payload_at;
    const uint64_t chunk_offset = offset_ + at;
    switch (header.type) {
      case sf::kChunkInfo:
        ParseText(payload, header.size, stream_.info);
        break;
      case sf::kChunkEnd:
        ParseText(payload, header.size, stream_.end);
        stream_.complete = true;
        break;
      case sf::kChunkSideband:
        ParseLines(payload, header.size, stream_.sideband);
        break;
      case sf::kChunkBlocks:
        if (auto s = ReadBlocks(payload, header.size, offset_ + payload_at); !s)
          return tl::unexpected(s.error());
        break;
      case sf::kChunkExec: {
        if (header.size % 4 != 0)
          return Fail(fmt::format("{}: offset {:#x}: exec chunk of {} bytes (not whole words)",
                                  name_, chunk_offset, header.size));
        words_.resize(header.size / 4);
        std::memcpy(words_.data(), payload, header.size);
        if (auto s = on_exec(header.tid, words_.data(), words_.size()); !s)
          return tl::unexpected(s.error());
        break;
      }
      default:
        return Fail(fmt::format("{}: offset {:#x}: unknown chunk type {}", name_, chunk_offset,
                                header.type));
    }
    at = payload_at + header.size;
  }
  offset_ += at;
  return at;
}

void QemuStreamReader::Finish(size_t leftover) {
  if (offset_ == 0 && leftover < sizeof sf::kMagic) {
    stream_.note = name_ + ": offset 0x0: the stream ends inside the magic";
  } else if (leftover > 0 && leftover < sizeof(sf::ChunkHeader)) {
    stream_.note = fmt::format("{}: offset {:#x}: the stream ends inside a chunk header", name_,
                               offset_);
  } else if (leftover > 0) {
    stream_.note = fmt::format("{}: offset {:#x}: the stream ends inside a chunk ({} bytes of it)",
                               name_, offset_, leftover - sizeof(sf::ChunkHeader));
  } else if (!stream_.complete) {
    stream_.note = name_ + ": the stream has no end chunk (the emulator did not exit normally)";
  }
}

Result<QemuStream> ParseQemuStream(const std::vector<uint8_t>& bytes, const std::string& name) {
  if (bytes.size() < sizeof sf::kMagic || std::memcmp(bytes.data(), sf::kMagic, sizeof sf::kMagic))
    return Fail(name + ": offset 0x0: not a ptprof QEMU plugin stream (bad magic)");
  QemuStreamReader reader(name);
  std::map<uint32_t, size_t> thread_index;
  std::vector<QemuThread> threads;
  auto consumed = reader.Consume(
      bytes.data(), bytes.size(), [&](uint32_t tid, const uint32_t* words, size_t count) -> Status {
        auto [it, added] = thread_index.try_emplace(tid, threads.size());
        if (added) threads.push_back(QemuThread{tid, {}});
        auto& out = threads[it->second].words;
        out.insert(out.end(), words, words + count);
        return {};
      });
  if (!consumed) return tl::unexpected(consumed.error());
  reader.Finish(bytes.size() - *consumed);
  QemuStream stream = std::move(reader.stream());
  stream.threads = std::move(threads);
  return stream;
}

}  // namespace ptprof::record
