#include "decoders/pt/ptdump_writer.h"

#include <intel-pt.h>

#include <fmt/format.h>

#include "decoders/pt/packet_reader.h"

namespace ptprof::pt {

namespace {

// ptdump formats each column into a fixed-size buffer; these are the widths (with the
// terminating NUL) that decide both padding and truncation.
constexpr size_t kOffsetWidth = 17;
constexpr size_t kRawWidth = 33;
constexpr size_t kNameWidth = 10;
constexpr size_t kPayloadWidth = 25;
constexpr size_t kLongPayloadWidth = 48;  // TNT bit strings
constexpr size_t kTrackIdWidth = 5;
constexpr size_t kTrackValueWidth = 17;

std::string Clip(std::string text, size_t width) {
  if (text.size() >= width) text.resize(width - 1);
  return text;
}

void AppendPadded(std::string& out, const std::string& text, size_t width) {
  out += text;
  if (text.size() < width) out.append(width - text.size(), ' ');
}

bool IsTimingPacket(PacketKind kind) {
  return kind == PacketKind::kTsc || kind == PacketKind::kCbr || kind == PacketKind::kTma ||
         kind == PacketKind::kMtc || kind == PacketKind::kCyc;
}

}  // namespace

PtdumpWriter::PtdumpWriter(const PtParams& params, const PtdumpOptions& options, Emit emit)
    : params_(params),
      options_(options),
      emit_(std::move(emit)),
      calibration_(TimingParamsFor(params)),
      time_(TimingParamsFor(params)) {}

void PtdumpWriter::ResetTracking() {
  last_ip_.Reset();
  calibration_.Reset();
  time_.Reset();
  last_shown_tsc_ = 0;
  last_shown_fcr_ = 0;
  in_psb_ = false;
}

void PtdumpWriter::Diag(std::string_view what, uint64_t offset, int code) {
  if (code != 0)
    emit_(fmt::format("[{:x}: {}: {}]\n", offset, what, PtErrorMessage(code)));
  else
    emit_(fmt::format("[{:x}: {}]\n", offset, what));
}

void PtdumpWriter::DiagTime(std::string_view what, uint64_t offset, TimeStatus status) {
  if (status != TimeStatus::kOk) Diag(what, offset, LibiptErrorOf(status));
}

void PtdumpWriter::TrackLastIp(const IpPayload& ip, uint64_t offset, Line& line) {
  line.track_id = "ip";
  if (last_ip_.Update(ip) == LastIp::State::kBadCompression) {
    line.track_value = "<unavailable>";
    Diag("error tracking last-ip", offset, -pte_bad_packet);
    return;
  }
  switch (last_ip_.Query()) {
    case LastIp::State::kValid: line.track_value = fmt::format("{:016x}", last_ip_.Ip()); break;
    case LastIp::State::kSuppressed: line.track_value = "<suppressed>"; break;
    default:
      line.track_value = "<unavailable>";
      Diag("error tracking last-ip", offset, -pte_noip);
      break;
  }
}

void PtdumpWriter::ShowTime(uint64_t offset, Line& line) {
  line.track_id = "tsc";
  uint64_t tsc = 0;
  const TimeStatus status = time_.Query(tsc);
  if (status != TimeStatus::kOk && !(status == TimeStatus::kNoTime && options_.no_wall_clock)) {
    DiagTime("error printing time", offset, status);
    line.track_value = "<unavailable>";
    return;
  }
  if (options_.time_as_delta) {
    line.track_value = tsc >= last_shown_tsc_ ? fmt::format("+{:x}", tsc - last_shown_tsc_)
                                              : fmt::format("-{:x}", last_shown_tsc_ - tsc);
    last_shown_tsc_ = tsc;
  } else {
    line.track_value = fmt::format("{:016x}", tsc);
  }
}

void PtdumpWriter::ShowCalibration(uint64_t offset, Line& line) {
  line.track_id = "fcr";
  uint64_t fcr = 0;
  const TimeStatus status = calibration_.Fcr(fcr);
  if (status != TimeStatus::kOk) {
    line.track_value = "<unavailable>";
    DiagTime("error printing time", offset, status);
    return;
  }
  // The ratio is fixed-point; show it as a number of cycles.
  const double scale = static_cast<double>(uint64_t{1} << kFcrShift);
  const double value = static_cast<double>(fcr) / scale;
  if (options_.time_as_delta) {
    const double previous = static_cast<double>(last_shown_fcr_) / scale;
    line.track_value = fmt::format("{:+.3f}", value - previous);
    last_shown_fcr_ = fcr;
  } else {
    line.track_value = fmt::format("{:.3f}", value);
  }
}

void PtdumpWriter::TrackTime(const Packet& packet, uint64_t offset, Line& line) {
  const bool calibrate = !options_.no_tcal;
  switch (packet.kind) {
    case PacketKind::kTsc:
      if (calibrate)
        DiagTime("error calibrating time", offset, calibration_.OnTsc(packet.tsc, in_psb_));
      DiagTime("error updating time", offset, time_.OnTsc(packet.tsc));
      break;
    case PacketKind::kCbr:
      if (calibrate)
        DiagTime("error calibrating time", offset, calibration_.OnCbr(packet.cbr_ratio, in_psb_));
      DiagTime("error updating time", offset, time_.OnCbr(packet.cbr_ratio));
      line.skip_time = true;
      break;
    case PacketKind::kTma:
      DiagTime("error updating time", offset, time_.OnTma(packet.tma_ctc, packet.tma_fc));
      line.skip_tcal = true;
      break;
    case PacketKind::kMtc:
      if (calibrate)
        DiagTime("error calibrating time", offset, calibration_.OnMtc(packet.mtc_ctc));
      DiagTime("error updating time", offset, time_.OnMtc(packet.mtc_ctc));
      break;
    case PacketKind::kCyc: {
      uint64_t fcr = 0;  // uncalibrated: the cycles are lost
      if (calibrate) {
        DiagTime("calibration error", offset, calibration_.Fcr(fcr));
        calibration_.OnCyc(packet.cyc);
      }
      const TimeStatus status = time_.OnCyc(packet.cyc, fcr);
      if (status != TimeStatus::kOk)
        DiagTime("error updating time", offset, status);
      else if (fcr == 0)
        Diag("error updating time: no calibration", offset, 0);
      line.skip_tcal = true;
      break;
    }
    default: return;
  }
  if (options_.show_tcal && !line.skip_tcal) ShowCalibration(offset, line);
  if (options_.show_time && !line.skip_time) ShowTime(offset, line);
  if (time_hook_) {
    uint64_t tsc = 0;
    time_.Query(tsc);  // without a TSC yet, the time is 0
    time_hook_(tsc);
  }
}

void PtdumpWriter::Describe(const Packet& packet, uint64_t offset, Line& line) {
  line.name = PacketName(packet);
  const bool long_payload = packet.kind == PacketKind::kTnt8 || packet.kind == PacketKind::kTnt64;
  line.payload = Clip(PacketPayloadText(packet), long_payload ? kLongPayloadWidth : kPayloadWidth);

  switch (packet.kind) {
    case PacketKind::kPsb:
      if (options_.track_time) DiagTime("error calibrating time", offset, calibration_.OnPsb());
      in_psb_ = true;
      break;
    case PacketKind::kPsbEnd: in_psb_ = false; break;
    case PacketKind::kPad: line.skip = options_.no_pad; break;
    case PacketKind::kFup:
    case PacketKind::kTip:
    case PacketKind::kTipPge:
    case PacketKind::kTipPgd:
      if (options_.show_last_ip) TrackLastIp(packet.ip, offset, line);
      break;
    case PacketKind::kPip:
      line.track_id = "cr3";
      line.track_value = fmt::format("{:016x}", packet.cr3);
      break;
    case PacketKind::kVmcs:
      line.track_id = "vmcs";
      line.track_value = fmt::format("{:016x}", packet.vmcs_base);
      break;
    case PacketKind::kMode:
      if (packet.mode.leaf == kModeLeafExec) {
        if (options_.show_exec_mode) {
          line.track_id = "em";
          line.track_value = ExecModeName(ExecModeOf(packet.mode));
        }
      } else if (packet.mode.leaf != kModeLeafTsx) {
        Diag("unknown mode leaf", offset, 0);
      }
      break;
    default: break;
  }

  if (IsTimingPacket(packet.kind)) {
    const bool cyc = packet.kind == PacketKind::kCyc;
    if (options_.track_time && !(cyc && options_.no_cyc)) TrackTime(packet, offset, line);
    if (options_.no_timing || (cyc && options_.no_cyc)) line.skip = true;
  }
  line.track_value = Clip(line.track_value, kTrackValueWidth);
}

void PtdumpWriter::Print(const Line& line) {
  if (line.skip || options_.quiet) return;
  std::string out;
  const char* separator = "";
  if (options_.show_offset) {
    AppendPadded(out, line.offset, kOffsetWidth);
    separator = " ";
  }
  if (!line.raw.empty()) {
    out += separator;
    AppendPadded(out, line.raw, kRawWidth);
    separator = " ";
  }
  out += separator;
  if (!line.payload.empty())
    AppendPadded(out, line.name, kNameWidth);
  else
    out += line.name;
  if (!line.track_id.empty()) {
    out += ' ';
    AppendPadded(out, line.payload, kPayloadWidth);
    out += ' ';
    AppendPadded(out, line.track_id, kTrackIdWidth);
    out += line.track_value;
  } else if (!line.payload.empty()) {
    out += ' ';
    out += line.payload;
  }
  out += '\n';
  emit_(out);
}

int PtdumpWriter::DumpUntilError(PacketReader& reader) {
  const std::span<const uint8_t> trace = reader.Trace();
  for (;;) {
    Packet packet;
    uint64_t offset = 0;
    DecodeError error;
    const ReadStatus status = reader.Next(packet, offset, error);
    if (status == ReadStatus::kEnd) return 0;
    if (status == ReadStatus::kError) {
      Diag("error decoding packet", error.offset, error.code);
      return error.code;
    }
    Line line;
    line.offset = fmt::format("{:016x}", offset);
    if (options_.show_raw) {
      for (size_t i = 0; i < packet.size && offset + i < trace.size(); ++i)
        line.raw += fmt::format("{:02x}", trace[offset + i]);
      line.raw = Clip(line.raw, kRawWidth);
    }
    Describe(packet, offset, line);
    Print(line);
  }
}

int PtdumpWriter::Dump(std::span<const uint8_t> trace) {
  auto reader = PacketReader::Create(trace, params_);
  if (reader && reader->ErrataError() != 0)
    Diag("failed to determine errata", 0, reader->ErrataError());
  if (!reader) {
    Diag("failed to allocate decoder", 0, 0);
    return 0;
  }
  DecodeError error;
  if (options_.no_sync) {
    if (reader->SyncSet(0, error) != ReadStatus::kOk) {
      Diag("sync error", 0, error.code ? error.code : -pte_eos);
      return error.code ? -error.code : pte_eos;
    }
  } else {
    const ReadStatus status = reader->SyncForward(error);
    if (status == ReadStatus::kEnd) return 0;
    if (status == ReadStatus::kError) {
      Diag("sync error", 0, error.code);
      return -error.code;
    }
  }
  // After a decode error, continue at the next PSB with fresh tracking state.
  while (DumpUntilError(*reader) != 0) {
    const ReadStatus status = reader->SyncForward(error);
    if (status == ReadStatus::kEnd) return 0;
    if (status == ReadStatus::kError) {
      Diag("sync error", 0, error.code);
      return -error.code;
    }
    ResetTracking();
  }
  return 0;
}

}  // namespace ptprof::pt
