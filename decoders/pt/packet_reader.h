#pragma once
// PacketReader answers "which packets does this raw Intel PT buffer hold, and where can they not be
// decoded?". It walks the buffer with libipt's packet decoder and hands out ptprof Packets; a decode
// error is reported with its offset and libipt's message, and the caller decides whether to
// resynchronise at the next PSB (SyncForward), which is what ptdump does.
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "decoders/pt/packet.h"
#include "decoders/pt/pt_params.h"
#include "src/model/result.h"

namespace ptprof::pt {

// A place in the trace where decoding failed: the offset of the failing packet, libipt's error
// code (negative, a pte_* value) and its message ("unknown packet", "no sync", ...).
struct DecodeError {
  uint64_t offset = 0;
  int code = 0;
  std::string message;
};

enum class ReadStatus { kOk, kEnd, kError };

class PacketReader {
 public:
  // Fails when libipt rejects the configuration (for example an empty buffer). `trace` must
  // outlive the reader.
  static Result<PacketReader> Create(std::span<const uint8_t> trace, const PtParams& params);

  PacketReader(PacketReader&&) noexcept;
  PacketReader& operator=(PacketReader&&) noexcept;
  ~PacketReader();

  // Moves to the next PSB after the current position. kEnd when there is none.
  ReadStatus SyncForward(DecodeError& error);
  // Assumes a packet boundary at `offset` (ptdump's --no-sync).
  ReadStatus SyncSet(uint64_t offset, DecodeError& error);

  // The offset of the next packet.
  uint64_t Offset() const;

  // Decodes the packet at Offset(). On kOk `packet` holds it and `offset` is where it starts; on
  // kError the reader stays where it is: call SyncForward to continue.
  ReadStatus Next(Packet& packet, uint64_t& offset, DecodeError& error);

  std::span<const uint8_t> Trace() const { return trace_; }

  // 0, or libipt's (negative) error code when it knows no errata for the configured CPU (the
  // trace is then decoded without workarounds).
  int ErrataError() const;

 private:
  struct State;
  PacketReader(std::span<const uint8_t> trace, std::unique_ptr<State> state);

  std::span<const uint8_t> trace_;
  std::unique_ptr<State> state_;
};

// libipt's message for one of its (negative or positive) pte_* error codes.
std::string PtErrorMessage(int code);

}  // namespace ptprof::pt
