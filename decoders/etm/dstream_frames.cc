#include "decoders/etm/dstream_frames.h"

#include <algorithm>
#include <cstddef>

namespace ptprof::etm {

std::vector<uint8_t> WithoutDstreamFooters(const std::vector<uint8_t>& in) {
  constexpr size_t kBlock = 512, kFooter = 8;
  std::vector<uint8_t> out;
  out.reserve(in.size());
  for (size_t pos = 0; pos < in.size(); pos += kBlock) {
    size_t data = std::min(kBlock - kFooter, in.size() - pos);
    out.insert(out.end(), in.begin() + static_cast<ptrdiff_t>(pos),
               in.begin() + static_cast<ptrdiff_t>(pos + data));
  }
  return out;
}

std::vector<uint8_t> WithoutFsyncs(const std::vector<uint8_t>& in, std::vector<uint64_t>& shift) {
  std::vector<uint8_t> out;
  out.reserve(in.size());
  shift.clear();
  size_t pos = 0;
  for (;;) {
    while (pos + 4 <= in.size() && in[pos] == 0xff && in[pos + 1] == 0xff && in[pos + 2] == 0xff &&
           in[pos + 3] == 0x7f)
      pos += 4;
    if (pos + 16 > in.size()) break;
    shift.push_back(pos - out.size());
    out.insert(out.end(), in.begin() + static_cast<ptrdiff_t>(pos),
               in.begin() + static_cast<ptrdiff_t>(pos + 16));
    pos += 16;
  }
  return out;
}

}  // namespace ptprof::etm
