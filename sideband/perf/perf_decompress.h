#pragma once
// Decompression of PERF_RECORD_COMPRESSED payloads (`perf record -z`): answers "which records
// does this compressed record hold?". The payloads of a file are one zstd stream cut into pieces
// (a frame and a record may continue in the next compressed record), so the decompressor keeps its
// zstd state and the incomplete tail of the records between calls.
// Output is bounded: a payload that would decompress to more than `max_output` bytes is refused.
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "sideband/perf/perf_record.h"
#include "src/model/result.h"

struct ZSTD_DCtx_s;

namespace ptprof::perf {

class RecordDecompressor {
 public:
  explicit RecordDecompressor(uint64_t max_output = uint64_t{64} << 20) : max_output_(max_output) {}

  // Decompresses `payload` and returns the complete records now available (header, body bytes).
  // `offset` is the compressed record's file offset, for errors.
  struct Inner {
    RecordHeader header;
    std::vector<uint8_t> body;
  };
  Result<std::vector<Inner>> Add(std::span<const uint8_t> payload, uint64_t offset);

  // Bytes of an incomplete record left over at the end (0 when the stream ended cleanly).
  size_t pending() const { return pending_.size(); }

 private:
  struct DStreamFree {
    void operator()(ZSTD_DCtx_s* s) const;
  };
  uint64_t max_output_;
  std::unique_ptr<ZSTD_DCtx_s, DStreamFree> stream_;
  std::vector<uint8_t> pending_;
};

}  // namespace ptprof::perf
