#include "sideband/perf/perf_decompress.h"

#include <cstring>
#include <memory>

#include <fmt/format.h>
#include <zstd.h>

namespace ptprof::perf {

void RecordDecompressor::DStreamFree::operator()(ZSTD_DStream* s) const { ZSTD_freeDStream(s); }

Result<std::vector<RecordDecompressor::Inner>> RecordDecompressor::Add(std::span<const uint8_t> payload,
                                                                       uint64_t offset) {
  if (!stream_) {
    stream_.reset(ZSTD_createDStream());
    if (!stream_) return Fail(fmt::format("offset {:#x}: cannot create a zstd decompressor", offset));
    ZSTD_initDStream(stream_.get());
  }
  ZSTD_inBuffer in{payload.data(), payload.size(), 0};
  std::vector<uint8_t> chunk(64 * 1024);
  uint64_t produced = 0;
  ZSTD_outBuffer out{};
  do {  // until the input is used up and the decoder has nothing more to flush
    out = ZSTD_outBuffer{chunk.data(), chunk.size(), 0};
    size_t ret = ZSTD_decompressStream(stream_.get(), &out, &in);
    if (ZSTD_isError(ret)) {
      stream_.reset();  // start afresh at the next compressed record
      return Fail(fmt::format("offset {:#x}: compressed records do not decompress: {}", offset, ZSTD_getErrorName(ret)));
    }
    produced += out.pos;
    if (produced > max_output_) {
      stream_.reset();
      return Fail(fmt::format("offset {:#x}: compressed records expand past {} bytes", offset, max_output_));
    }
    pending_.insert(pending_.end(), chunk.begin(), chunk.begin() + static_cast<std::ptrdiff_t>(out.pos));
  } while (in.pos < in.size || out.pos == out.size);
  std::vector<Inner> records;
  size_t pos = 0;
  while (pending_.size() - pos >= 8) {
    Inner r;
    std::memcpy(&r.header.type, &pending_[pos], 4);
    std::memcpy(&r.header.misc, &pending_[pos + 4], 2);
    std::memcpy(&r.header.size, &pending_[pos + 6], 2);
    if (r.header.size < 8) {
      pending_.clear();
      return Fail(fmt::format("offset {:#x}: a compressed record has size {}, smaller than its header", offset,
                              r.header.size));
    }
    if (pending_.size() - pos < r.header.size) break;  // continues in the next compressed record
    r.body.assign(pending_.begin() + static_cast<std::ptrdiff_t>(pos + 8),
                  pending_.begin() + static_cast<std::ptrdiff_t>(pos + r.header.size));
    pos += r.header.size;
    records.push_back(std::move(r));
  }
  pending_.erase(pending_.begin(), pending_.begin() + static_cast<std::ptrdiff_t>(pos));
  return records;
}

}  // namespace ptprof::perf
