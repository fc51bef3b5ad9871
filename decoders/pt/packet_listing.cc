#include "decoders/pt/packet_listing.h"

#include <fmt/format.h>

#include "decoders/pt/packet_last_ip.h"
#include "decoders/pt/packet_reader.h"
#include "decoders/pt/pt_time.h"
#include "decoders/pt/pt_time_cal.h"
#include "src/model/json_text.h"

namespace ptprof::pt {

namespace {

// Follows the last IP and the time across packets, the state a reader of a listing lacks.
class Tracking {
 public:
  explicit Tracking(const PtParams& params)
      : calibration_(TimingParamsFor(params)), time_(TimingParamsFor(params)) {}

  void Reset() {
    last_ip_.Reset();
    calibration_.Reset();
    time_.Reset();
    in_psb_ = false;
  }

  void Annotate(ListedPacket& listed) {
    const Packet& packet = listed.packet;
    bool timing = true;
    switch (packet.kind) {
      case PacketKind::kPsb:
        calibration_.OnPsb();
        in_psb_ = true;
        timing = false;
        break;
      case PacketKind::kPsbEnd:
        in_psb_ = false;
        timing = false;
        break;
      case PacketKind::kTsc:
        calibration_.OnTsc(packet.tsc, in_psb_);
        time_.OnTsc(packet.tsc);
        break;
      case PacketKind::kCbr:
        calibration_.OnCbr(packet.cbr_ratio, in_psb_);
        time_.OnCbr(packet.cbr_ratio);
        break;
      case PacketKind::kTma: time_.OnTma(packet.tma_ctc, packet.tma_fc); break;
      case PacketKind::kMtc:
        calibration_.OnMtc(packet.mtc_ctc);
        time_.OnMtc(packet.mtc_ctc);
        break;
      case PacketKind::kCyc: {
        uint64_t fcr = 0;
        calibration_.Fcr(fcr);
        calibration_.OnCyc(packet.cyc);
        time_.OnCyc(packet.cyc, fcr);
        break;
      }
      default: timing = false; break;
    }
    if (timing && packet.kind != PacketKind::kCbr)
      listed.has_tsc = time_.Query(listed.tsc) == TimeStatus::kOk;
    if (HasIpPayload(packet.kind) &&
        last_ip_.Update(packet.ip) == LastIp::State::kValid) {
      listed.has_ip = true;
      listed.ip = last_ip_.Ip();
    }
  }

 private:
  LastIp last_ip_;
  TimeCalibration calibration_;
  TimeTracker time_;
  bool in_psb_ = false;
};

}  // namespace

std::string PacketJson(const ListedPacket& listed) {
  std::string out;
  AppendPacketJson(out, listed);
  return out;
}

void AppendPacketJson(std::string& out, const ListedPacket& listed) {
  // Spelled by hand: this runs for every packet of the trace.
  auto address = [&out](const char* key, uint64_t value) {
    out += key;
    AppendHexAddress(out, value);
    out += '"';
  };
  out += "{\"offset\":";
  AppendDecimal(out, listed.offset);
  out += ",\"size\":";
  AppendDecimal(out, listed.packet.size);
  out += ",\"packet\":";
  out += JsonString(PacketName(listed.packet));
  out += ",\"payload\":";
  out += JsonString(PacketPayloadText(listed.packet));
  if (listed.has_ip) address(",\"ip\":\"", listed.ip);
  if (listed.packet.kind == PacketKind::kPip) address(",\"cr3\":\"", listed.packet.cr3);
  if (listed.packet.kind == PacketKind::kVmcs) address(",\"vmcs\":\"", listed.packet.vmcs_base);
  if (listed.has_tsc) {
    out += ",\"tsc\":";
    AppendDecimal(out, listed.tsc);
  }
  out += '}';
}

std::string GapJson(uint64_t offset, std::string_view reason, std::string_view detail) {
  return fmt::format("{{\"offset\":{},\"event\":\"gap\",\"reason\":{},\"detail\":{}}}", offset,
                     JsonString(reason), JsonString(detail));
}

namespace {

// `value` as 16 hex digits, and `text` padded with spaces to `width`.
void AppendHex16(std::string& out, uint64_t value) {
  char digits[16];
  for (int i = 15; i >= 0; --i, value >>= 4) digits[i] = "0123456789abcdef"[value & 0xf];
  out.append(digits, sizeof digits);
}
void AppendPadded(std::string& out, std::string_view text, size_t width) {
  out += text;
  if (text.size() < width) out.append(width - text.size(), ' ');
}

}  // namespace

void AppendPacketTextLine(std::string& out, const ListedPacket& listed) {
  // Spelled by hand: this runs for every packet of the trace.
  const size_t start = out.size();
  AppendHex16(out, listed.offset);
  out += "  ";
  AppendPadded(out, PacketName(listed.packet), 9);
  const std::string payload = PacketPayloadText(listed.packet);
  if (!payload.empty() || listed.has_ip || listed.has_tsc) {
    out += "  ";
    AppendPadded(out, payload, 24);
  }
  if (listed.has_ip) {
    out += "  ip  ";
    AppendHex16(out, listed.ip);
  }
  if (listed.has_tsc) {
    out += "  tsc ";
    AppendHex16(out, listed.tsc);
  }
  while (out.size() > start && out.back() == ' ') out.pop_back();
}

std::string GapTextLine(uint64_t offset, std::string_view reason, std::string_view detail) {
  return fmt::format("{:016x}  [gap: {}: {}]", offset, reason, detail);
}

PacketListing::PacketListing(const PtParams& params, ListingFormat format, Emit emit)
    : params_(params), format_(format), emit_(std::move(emit)) {}

Result<ListingSummary> PacketListing::List(std::span<const uint8_t> trace) {
  auto reader = PacketReader::Create(trace, params_);
  if (!reader) return Fail(reader.error().message);
  ListingSummary summary;
  DecodeError error;
  ReadStatus status = reader->SyncForward(error);
  if (status == ReadStatus::kEnd) return Fail("offset 0x0: no PSB found");
  if (status == ReadStatus::kError)
    return Fail(fmt::format("offset {:#x}: {}", error.offset, error.message));
  summary.skipped_bytes = reader->Offset();

  Tracking tracking(params_);
  std::string line;  // each packet's, its storage kept from one to the next
  auto gap = [&](uint64_t offset, std::string_view reason, std::string_view detail) {
    ++summary.gaps;
    const std::string line = format_ == ListingFormat::kJsonl
                                 ? GapJson(offset, reason, detail)
                                 : GapTextLine(offset, reason, detail);
    emit_(line + "\n");
  };
  for (;;) {
    ListedPacket listed;
    status = reader->Next(listed.packet, listed.offset, error);
    if (status == ReadStatus::kEnd) {
      // libipt reports a packet cut off by the end of the buffer as the end of the trace; the
      // bytes left over are that packet's beginning.
      const uint64_t cut = reader->Offset();
      if (cut < trace.size()) {
        const uint64_t present = trace.size() - cut;
        summary.truncated = true;
        summary.truncated_at = cut;
        summary.skipped_bytes += present;
        gap(cut, "truncated",
            fmt::format("the trace ends inside this packet ({} byte{} of it present)", present,
                        present == 1 ? "" : "s"));
      }
      break;
    }
    if (status == ReadStatus::kError) {
      gap(error.offset, "desync", error.message);
      const uint64_t failed_at = error.offset;
      status = reader->SyncForward(error);
      if (status == ReadStatus::kError) {
        gap(error.offset, "desync", error.message);
        break;
      }
      const uint64_t resumed_at = status == ReadStatus::kEnd ? trace.size() : reader->Offset();
      summary.skipped_bytes += resumed_at > failed_at ? resumed_at - failed_at : 0;
      if (status == ReadStatus::kEnd) break;
      tracking.Reset();
      continue;
    }
    ++summary.packets;
    tracking.Annotate(listed);
    line.clear();
    if (format_ == ListingFormat::kJsonl)
      AppendPacketJson(line, listed);
    else
      AppendPacketTextLine(line, listed);
    line += '\n';
    emit_(line);
  }
  return summary;
}

}  // namespace ptprof::pt
