#pragma once
// Test support for the flow decoder's tests (compiled into the test program only): writes small
// code images to temporary files and encodes PT packet streams with libipt's encoder.
#include <cstdint>
#include <string>
#include <vector>

#include <intel-pt.h>

#include "src/model/event_sink.h"

namespace ptprof::pt::testing {

// Keeps every event it is given, in order, and counts the ends.
class CollectingSink : public EventSink {
 public:
  void OnEvent(const TraceEvent& event) override { events.push_back(event); }
  void OnEnd() override { ++ends; }
  std::vector<TraceEvent> events;
  int ends = 0;
};

// Writes `bytes` to a new temporary file and returns its path (removed when `TempFile` dies).
class TempFile {
 public:
  explicit TempFile(const std::vector<uint8_t>& bytes);
  ~TempFile();
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Appends encoded packets. The encoder does not track the last IP: IPs are always sent in full
// (sign-extended 48 bits), which every decoder accepts.
class PacketWriter {
 public:
  PacketWriter& Psb();
  PacketWriter& PsbEnd();
  PacketWriter& Tsc(uint64_t tsc);
  PacketWriter& ModeExec(pt_exec_mode mode);
  PacketWriter& TipPge(uint64_t ip);
  PacketWriter& TipPgdSuppressed();
  PacketWriter& Tip(uint64_t ip);
  PacketWriter& Fup(uint64_t ip);
  PacketWriter& Tnt(uint64_t bits, uint8_t count);  // first branch in the highest bit
  PacketWriter& Ovf();
  PacketWriter& Cbr(uint8_t ratio);
  PacketWriter& Raw(std::vector<uint8_t> bytes);    // bytes the encoder would not write

  const std::vector<uint8_t>& bytes() const { return bytes_; }

 private:
  PacketWriter& Emit(const pt_packet& packet);
  std::vector<uint8_t> bytes_;
};

// A 64-bit program at 0x1000 used by the flow tests:
//   1000 nop; 1001 je 1005; 1003 nop; 1004 nop; 1005 call 1010; 100a syscall; 100c nop...
//   1010 nop; 1011 ret
std::vector<uint8_t> SampleProgram();
inline constexpr uint64_t kSampleBase = 0x1000;

// The sample program's trace: enabled at 1000, je taken, call, ret (compressed), syscall with
// tracing disabled at it.
std::vector<uint8_t> SampleTrace(uint64_t tsc = 0x1234);

}  // namespace ptprof::pt::testing
