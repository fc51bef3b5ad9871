#pragma once
// PacketListing answers "what packets does this trace hold, and where is it damaged?" in ptprof's
// own formats: a ptdump-like text listing or one JSON object per line. Unlike the ptdump
// compatibility writer it adds what a reader usually wants next to each packet (the full IP an IP
// packet stands for, the estimated TSC at timing packets) and reports damage as gap records:
// decoding continues at the next PSB, and a packet cut off by the end of the trace is a
// "truncated" gap after the last complete packet.
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>

#include "decoders/pt/packet.h"
#include "decoders/pt/pt_params.h"
#include "src/model/result.h"

namespace ptprof::pt {

enum class ListingFormat { kText, kJsonl };

struct ListingSummary {
  uint64_t packets = 0;
  uint64_t gaps = 0;          // decode errors (each followed by a resync at the next PSB) and
                              // a packet cut off by the end of the trace
  bool truncated = false;     // the trace ends inside a packet (also counted in gaps) ...
  uint64_t truncated_at = 0;  // ... that starts here
  uint64_t skipped_bytes = 0; // bytes before the first PSB, between a gap and the next PSB,
                              // and of a truncated last packet
};

// One packet as PacketListing writes it, with what tracking adds.
struct ListedPacket {
  uint64_t offset = 0;
  Packet packet;
  bool has_ip = false;   // `ip` is the full IP of an IP packet (not suppressed, known)
  uint64_t ip = 0;
  bool has_tsc = false;  // `tsc` is the estimated TSC at a timing packet
  uint64_t tsc = 0;
};

// The JSONL record of a packet or of a gap, without the newline.
std::string PacketJson(const ListedPacket& listed);
// The same appended to `out`.
void AppendPacketJson(std::string& out, const ListedPacket& listed);
std::string GapJson(uint64_t offset, std::string_view reason, std::string_view detail);

// The text line of a packet, appended to `out`, and of a gap; without the newline.
void AppendPacketTextLine(std::string& out, const ListedPacket& listed);
std::string GapTextLine(uint64_t offset, std::string_view reason, std::string_view detail);

class PacketListing {
 public:
  // `emit` receives the output one line (with its newline) at a time.
  using Emit = std::function<void(std::string_view)>;

  PacketListing(const PtParams& params, ListingFormat format, Emit emit);

  // Lists `trace`. Fails only when nothing can be decoded ("offset 0x0: no PSB found"); damage
  // after the first PSB becomes gap records and is counted in the summary.
  Result<ListingSummary> List(std::span<const uint8_t> trace);

 private:
  PtParams params_;
  ListingFormat format_;
  Emit emit_;
};

}  // namespace ptprof::pt
