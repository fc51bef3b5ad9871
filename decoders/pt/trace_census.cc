#include "decoders/pt/trace_census.h"

#include "decoders/pt/packet_reader.h"

namespace ptprof::pt {

Result<TraceCensus> TakeCensus(std::span<const uint8_t> trace, const PtParams& params) {
  if (trace.empty()) return Fail("offset 0x0: the trace is empty");
  auto reader = PacketReader::Create(trace, params);
  if (!reader) return tl::unexpected(reader.error());
  TraceCensus census;
  census.bytes = trace.size();
  DecodeError error;
  uint64_t resume_from = 0;  // where the bytes not yet accounted for begin
  while (reader->SyncForward(error) == ReadStatus::kOk) {
    uint64_t sync = reader->Offset();
    if (sync > resume_from) census.skipped_bytes += sync - resume_from;
    Packet packet;
    uint64_t offset = 0;
    ReadStatus status;
    while ((status = reader->Next(packet, offset, error)) == ReadStatus::kOk) {
      ++census.packets;
      ++census.packets_by_kind[PacketName(packet)];
      if (packet.kind == PacketKind::kPsb) census.psb_offsets.push_back(offset);
      if (packet.kind == PacketKind::kTsc) {
        if (!census.has_tsc) census.first_tsc = packet.tsc;
        census.last_tsc = packet.tsc;
        census.has_tsc = true;
      }
      resume_from = offset + packet.size;
    }
    if (status == ReadStatus::kEnd) return census;
    census.errors.push_back({error.offset, error.message});
    resume_from = error.offset;
  }
  if (trace.size() > resume_from) census.skipped_bytes += trace.size() - resume_from;
  return census;
}

}  // namespace ptprof::pt
