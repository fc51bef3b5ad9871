#pragma once
// A DSTREAM capture as OpenCSD's frame deformatter is given it: DSTREAM writes the trace in
// 512-byte blocks whose last 8 bytes are a footer, and puts FSYNCs (ff ff ff 7f) between its
// 16-byte frames.
#include <cstdint>
#include <vector>

namespace ptprof::etm {

// The capture's data bytes, its blocks' footers left out: the trace indices (as trc_pkt_lister
// counts them) run over these.
std::vector<uint8_t> WithoutDstreamFooters(const std::vector<uint8_t>& in);

// The frames of `in` (footers already out) without the FSYNCs before them: whole 16-byte frames,
// each read after any FSYNCs at its start, as OpenCSD's deformatter reads them; a frame cut by the
// end is left out. `shift[k]` is how many bytes lay before frame k in `in` beyond its place in
// the result (frame k began at 16 k + shift[k]). OpenCSD is then given plain frames
// (OCSD_DFRMTR_FRAME_MEM_ALIGN): libopencsd 1.3.3 reads past the buffer in its own FSYNC handling
// on some damaged captures (found by tools/fuzz.sh etm).
std::vector<uint8_t> WithoutFsyncs(const std::vector<uint8_t>& in, std::vector<uint64_t>& shift);

}  // namespace ptprof::etm
