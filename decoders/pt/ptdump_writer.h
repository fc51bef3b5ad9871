#pragma once
// PtdumpWriter answers "what would libipt 2.0.5's ptdump print for this trace?". It lists every
// packet in ptdump's columns (offset, optional raw bytes, name, payload, and one tracking column for
// last IP, CR3, VMCS, execution mode, estimated TSC or calibration), reports decode errors the way
// ptdump does ("[offset: error decoding packet: message]") and resynchronises at the next PSB.
// The output is meant to be byte-identical to ptdump's, so that libipt's own expected outputs can
// check ptprof.
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>

#include "decoders/pt/packet.h"
#include "decoders/pt/packet_last_ip.h"
#include "decoders/pt/packet_reader.h"
#include "decoders/pt/pt_params.h"
#include "decoders/pt/pt_time.h"
#include "decoders/pt/pt_time_cal.h"

namespace ptprof::pt {

// ptdump's display options, named after its command-line flags.
struct PtdumpOptions {
  bool show_offset = true;     // cleared by --no-offset
  bool show_raw = false;       // --raw
  bool show_last_ip = false;   // --lastip
  bool show_exec_mode = false; // --exec-mode
  bool track_time = false;     // set by --time and --tcal
  bool show_time = false;      // --time
  bool show_tcal = false;      // --tcal
  bool time_as_delta = false;  // --time-delta
  bool quiet = false;          // --quiet: only the bracketed diagnostics
  bool no_pad = false;         // --no-pad
  bool no_sync = false;        // --no-sync: assume a packet boundary at offset 0
  bool no_tcal = false;        // --no-tcal
  bool no_wall_clock = false;  // --no-wall-clock
  bool no_timing = false;      // --no-timing
  bool no_cyc = false;         // --no-cyc
};

class PtdumpWriter {
 public:
  // `emit` receives the output, one complete line (with its newline) at a time.
  using Emit = std::function<void(std::string_view)>;

  PtdumpWriter(const PtParams& params, const PtdumpOptions& options, Emit emit);

  // Called with the time (TSC, 0 before the first) after each timing packet updated it, before
  // the packet's line is printed: where ptdump lists the sideband records due by then. Needs
  // options.track_time.
  using TimeHook = std::function<void(uint64_t tsc)>;
  void SetTimeHook(TimeHook hook) { time_hook_ = std::move(hook); }

  // Lists `trace`. Returns 0, or like ptdump the (positive) libipt error code when it could not
  // synchronise at all for a reason other than reaching the end.
  int Dump(std::span<const uint8_t> trace);

 private:
  // One output line in ptdump's columns; empty columns are left out.
  struct Line {
    std::string offset;
    std::string raw;
    std::string name;
    std::string payload;
    std::string track_id;
    std::string track_value;
    bool skip = false;
    bool skip_time = false;  // this packet gives no new time
    bool skip_tcal = false;  // this packet gives no new calibration
  };

  // Lists packets until the end (0) or a decode error (its negative libipt code).
  int DumpUntilError(PacketReader& reader);
  void ResetTracking();
  void Diag(std::string_view what, uint64_t offset, int code);
  void DiagTime(std::string_view what, uint64_t offset, TimeStatus status);
  void Describe(const Packet& packet, uint64_t offset, Line& line);
  void TrackLastIp(const IpPayload& ip, uint64_t offset, Line& line);
  void TrackTime(const Packet& packet, uint64_t offset, Line& line);
  void ShowTime(uint64_t offset, Line& line);
  void ShowCalibration(uint64_t offset, Line& line);
  void Print(const Line& line);

  PtParams params_;
  PtdumpOptions options_;
  Emit emit_;
  LastIp last_ip_;
  TimeCalibration calibration_;
  TimeTracker time_;
  uint64_t last_shown_tsc_ = 0;
  uint64_t last_shown_fcr_ = 0;
  bool in_psb_ = false;
  TimeHook time_hook_;
};

}  // namespace ptprof::pt
