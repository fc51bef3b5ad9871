#pragma once
// For the tests of the CoreSight decode in pieces: TC2's buffer (a real capture, 5 sources in
// one frame-formatted buffer of 32 KiB) repeated, with a fresh decoder of it, and what the
// tests compare against, the events of the decode in one piece.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "decoders/etm/etm_decoder.h"
#include "decoders/etm/snapshot_decode.h"
#include "src/model/collecting_sink.h"
#include "src/model/event_equality.h"

namespace ptprof::etm {

using CollectEvents = testing::CollectingSink;

struct Tc2Repeated {
  std::unique_ptr<EtmDecoder> decoder;
  std::vector<uint8_t> trace;
};

// Nothing where ../shared/testdata is not there (the tests then say SKIP).
inline std::optional<Tc2Repeated> OpenTc2Repeated(int copies) {
  auto tc2 = OpenSnapshotDecode(std::string(SHARED_TESTDATA) + "/opencsd/snapshots/TC2", {});
  if (!tc2) return std::nullopt;
  Tc2Repeated out{std::move(tc2->decoder), {}};
  for (int i = 0; i < copies; ++i)
    out.trace.insert(out.trace.end(), tc2->trace.begin(), tc2->trace.end());
  return out;
}

// The events of `decoder` fed the whole of `trace` in one piece.
inline std::vector<TraceEvent> DecodeInOnePiece(EtmDecoder& decoder,
                                                const std::vector<uint8_t>& trace) {
  CollectEvents all;
  std::vector<uint8_t> marks;
  decoder.DecodePiece(trace, 0, trace.size(), true, all, marks);
  return all.events;
}

inline bool SameEvents(const std::vector<TraceEvent>& a, const std::vector<TraceEvent>& b) {
  if (a.size() != b.size()) return false;
  for (size_t k = 0; k < a.size(); ++k)
    if (!SameEvent(a[k], b[k])) return false;
  return true;
}

}  // namespace ptprof::etm
