#include "decoders/pt/trace_census.h"

#include <algorithm>
#include <array>

#include "decoders/pt/packet_reader.h"

namespace ptprof::pt {

namespace {

// Packets counted by kind, the name of each kind (PacketName) made once: a trace holds tens of
// millions of packets and a handful of names. MODE packets go by their leaf.
class KindCounts {
 public:
  void Add(const Packet& packet) {
    size_t slot = static_cast<size_t>(packet.kind);
    if (packet.kind == PacketKind::kMode) slot = kModeSlots + std::min<size_t>(packet.mode.leaf, 7);
    if (counts_[slot]++ == 0) names_[slot] = PacketName(packet);
  }
  void AddTo(std::map<std::string, uint64_t>& by_name) const {
    for (size_t slot = 0; slot < counts_.size(); ++slot)
      if (counts_[slot]) by_name[names_[slot]] += counts_[slot];
  }

 private:
  static constexpr size_t kModeSlots = static_cast<size_t>(PacketKind::kPtw) + 1;
  std::array<uint64_t, kModeSlots + 8> counts_{};
  std::array<std::string, kModeSlots + 8> names_;
};

}  // namespace

Result<TraceCensus> TakeCensus(std::span<const uint8_t> trace, const PtParams& params) {
  if (trace.empty()) return Fail("offset 0x0: the trace is empty");
  auto reader = PacketReader::Create(trace, params);
  if (!reader) return tl::unexpected(reader.error());
  TraceCensus census;
  census.bytes = trace.size();
  DecodeError error;
  KindCounts kinds;
  uint64_t resume_from = 0;  // where the bytes not yet accounted for begin
  while (reader->SyncForward(error) == ReadStatus::kOk) {
    uint64_t sync = reader->Offset();
    if (sync > resume_from) census.skipped_bytes += sync - resume_from;
    Packet packet;
    uint64_t offset = 0;
    ReadStatus status;
    while ((status = reader->Next(packet, offset, error)) == ReadStatus::kOk) {
      ++census.packets;
      kinds.Add(packet);
      if (packet.kind == PacketKind::kPsb) census.psb_offsets.push_back(offset);
      if (packet.kind == PacketKind::kTsc) {
        if (!census.has_tsc) census.first_tsc = packet.tsc;
        census.last_tsc = packet.tsc;
        census.has_tsc = true;
      }
      resume_from = offset + packet.size;
    }
    if (status == ReadStatus::kEnd) {
      kinds.AddTo(census.packets_by_kind);
      return census;
    }
    census.errors.push_back({error.offset, error.message});
    resume_from = error.offset;
  }
  if (trace.size() > resume_from) census.skipped_bytes += trace.size() - resume_from;
  kinds.AddTo(census.packets_by_kind);
  return census;
}

}  // namespace ptprof::pt
