#pragma once
// One trace source's decoder in an OpenCSD decode tree: its protocol's registers (SourceConfig)
// turned into OpenCSD's configuration for ETMv4, ETE, ETMv3, PTM or STM, and OpenCSD's own names
// and error text, for the adapter (etm_decoder.cc).
#include <cstdint>
#include <string>

#include <opencsd/c_api/opencsd_c_api.h>

#include "decoders/etm/source_config.h"
#include "src/model/result.h"

namespace ptprof::etm {

// Adds the decoder of source `source` to `tree`, created with `flags` (OCSD_CREATE_FLG_* and
// decoder options); returns the trace ID OpenCSD gives its output, or an error naming the source.
Result<uint8_t> AddOcsdDecoder(dcd_tree_handle_t tree, const SourceConfig& source, int flags);

// OpenCSD's protocol for packet printing (ocsd_pkt_str).
ocsd_trace_protocol_t OcsdProtocolOf(Protocol protocol);

// OpenCSD's last logged error message, or else the text of its last error code (`fallback` when
// there is none).
std::string OcsdLastError(ocsd_err_t fallback);

}  // namespace ptprof::etm
