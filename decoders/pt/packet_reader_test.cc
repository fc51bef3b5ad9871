#include "decoders/pt/packet_reader.h"

#include <catch2/catch.hpp>

#include "decoders/pt/packet_test_encoder.h"

using namespace ptprof::pt;
using ptprof::ExecMode;
using namespace ptprof::pt::testing;

TEST_CASE("packets come back with their offsets and payloads") {
  const auto trace = Encode({Psb(), Ip(ppt_fup, pt_ipc_sext_48, 0x401000), ModeExec(true, false),
                             PsbEnd(), Tnt8(3, 0b101), Ip(ppt_tip, pt_ipc_update_16, 0x2000),
                             Tsc(0x123456), Mtc(0x42), Cyc(0x99), Pip(0xafafa0, true)});
  auto reader = PacketReader::Create(trace, PtParams{});
  REQUIRE(reader);
  DecodeError error;
  REQUIRE(reader->SyncForward(error) == ReadStatus::kOk);
  CHECK(reader->Offset() == 0);

  Packet packet;
  uint64_t offset = 99;
  REQUIRE(reader->Next(packet, offset, error) == ReadStatus::kOk);
  CHECK(packet.kind == PacketKind::kPsb);
  CHECK(offset == 0);
  CHECK(packet.size == 16);

  REQUIRE(reader->Next(packet, offset, error) == ReadStatus::kOk);
  CHECK(packet.kind == PacketKind::kFup);
  CHECK(offset == 16);
  CHECK(packet.ip.ipc == IpCompression::kSignExtend48);
  CHECK(packet.ip.ip == 0x401000);

  REQUIRE(reader->Next(packet, offset, error) == ReadStatus::kOk);
  CHECK(packet.kind == PacketKind::kMode);
  CHECK(packet.mode.leaf == kModeLeafExec);
  CHECK(ExecModeOf(packet.mode) == ExecMode::k64Bit);

  REQUIRE(reader->Next(packet, offset, error) == ReadStatus::kOk);
  CHECK(packet.kind == PacketKind::kPsbEnd);
  REQUIRE(reader->Next(packet, offset, error) == ReadStatus::kOk);
  CHECK(packet.kind == PacketKind::kTnt8);
  CHECK(packet.tnt.bit_count == 3);
  CHECK(packet.tnt.bits == 0b101);
  REQUIRE(reader->Next(packet, offset, error) == ReadStatus::kOk);
  CHECK(packet.kind == PacketKind::kTip);
  CHECK(packet.ip.ipc == IpCompression::kUpdate16);
  CHECK(packet.ip.ip == 0x2000);
  REQUIRE(reader->Next(packet, offset, error) == ReadStatus::kOk);
  CHECK(packet.kind == PacketKind::kTsc);
  CHECK(packet.tsc == 0x123456);
  REQUIRE(reader->Next(packet, offset, error) == ReadStatus::kOk);
  CHECK(packet.mtc_ctc == 0x42);
  REQUIRE(reader->Next(packet, offset, error) == ReadStatus::kOk);
  CHECK(packet.kind == PacketKind::kCyc);
  CHECK(packet.cyc == 0x99);
  REQUIRE(reader->Next(packet, offset, error) == ReadStatus::kOk);
  CHECK(packet.kind == PacketKind::kPip);
  CHECK(packet.cr3 == 0xafafa0);
  CHECK(packet.pip_nr);
  CHECK(reader->Next(packet, offset, error) == ReadStatus::kEnd);
}

TEST_CASE("bytes before the first PSB are skipped by SyncForward") {
  auto trace = Encode({Pad(), Pad(), Ovf(), Psb(), PsbEnd()});
  auto reader = PacketReader::Create(trace, PtParams{});
  REQUIRE(reader);
  DecodeError error;
  REQUIRE(reader->SyncForward(error) == ReadStatus::kOk);
  CHECK(reader->Offset() == 4);  // pad, pad, ovf (2 bytes)
}

TEST_CASE("a decode error names its offset and libipt's reason; decoding resumes at the next PSB") {
  auto first = Encode({Psb(), PsbEnd(), Tsc(0x1000)});
  const auto second = Encode({Psb(), PsbEnd(), Mtc(0x7)});
  const size_t damaged = first.size();
  first.push_back(0x02);  // an extended opcode that does not exist
  first.push_back(0x00);
  first.insert(first.end(), second.begin(), second.end());

  auto reader = PacketReader::Create(first, PtParams{});
  REQUIRE(reader);
  DecodeError error;
  REQUIRE(reader->SyncForward(error) == ReadStatus::kOk);
  Packet packet;
  uint64_t offset = 0;
  for (int i = 0; i < 3; ++i) REQUIRE(reader->Next(packet, offset, error) == ReadStatus::kOk);
  REQUIRE(reader->Next(packet, offset, error) == ReadStatus::kError);
  CHECK(error.offset == damaged);
  CHECK(error.code < 0);
  CHECK(error.message == "unknown opcode");

  REQUIRE(reader->SyncForward(error) == ReadStatus::kOk);
  CHECK(reader->Offset() == damaged + 2);
  REQUIRE(reader->Next(packet, offset, error) == ReadStatus::kOk);
  CHECK(packet.kind == PacketKind::kPsb);
  CHECK(offset == damaged + 2);
}

TEST_CASE("a trace without PSB has nothing to sync to; an empty trace is rejected") {
  const std::vector<uint8_t> zeros(64, 0);
  auto reader = PacketReader::Create(zeros, PtParams{});
  REQUIRE(reader);
  DecodeError error;
  CHECK(reader->SyncForward(error) == ReadStatus::kEnd);
  CHECK(!PacketReader::Create(std::span<const uint8_t>(), PtParams{}));
}

TEST_CASE("an unknown CPU is reported and decoded without errata") {
  const auto trace = Encode({Psb(), PsbEnd()});
  PtParams params;
  params.cpu = PtCpu{0, 0, 0};
  auto reader = PacketReader::Create(trace, params);
  REQUIRE(reader);
  CHECK(reader->ErrataError() < 0);
  CHECK(PtErrorMessage(reader->ErrataError()) == "unknown cpu");
  params.cpu = PtCpu{6, 78, 3};
  auto known = PacketReader::Create(trace, params);
  REQUIRE(known);
  CHECK(known->ErrataError() == 0);
}

TEST_CASE("--cpu auto reads this machine's CPU") {
  const auto trace = Encode({Psb(), PsbEnd()});
  PtParams params;
  params.cpu_auto = true;
  auto reader = PacketReader::Create(trace, params);
  REQUIRE(reader);
  DecodeError error;
  CHECK(reader->SyncForward(error) == ReadStatus::kOk);
}
