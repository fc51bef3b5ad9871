#include "decoders/pt/packet.h"

#include <catch2/catch.hpp>

using namespace ptprof::pt;
using ptprof::ExecMode;

namespace {
Packet IpPacket(PacketKind kind, IpCompression ipc, uint64_t ip) {
  Packet packet;
  packet.kind = kind;
  packet.ip = {ipc, ip};
  return packet;
}
}  // namespace

TEST_CASE("IP payloads show the bytes they carry and the compression") {
  CHECK(PacketPayloadText(IpPacket(PacketKind::kTip, IpCompression::kSuppressed, 0)) ==
        "0: ????????????????");
  CHECK(PacketPayloadText(IpPacket(PacketKind::kTip, IpCompression::kUpdate16, 0x1002)) ==
        "1: ????????????1002");
  CHECK(PacketPayloadText(IpPacket(PacketKind::kFup, IpCompression::kUpdate32, 0x1001)) ==
        "2: ????????00001001");
  CHECK(PacketPayloadText(IpPacket(PacketKind::kTipPge, IpCompression::kSignExtend48,
                                   0xffffffff1000)) == "3: ffffffffffff1000");
  CHECK(PacketPayloadText(IpPacket(PacketKind::kTipPgd, IpCompression::kUpdate48,
                                   0xffffffff4000)) == "4: ????ffffffff4000");
  CHECK(PacketPayloadText(IpPacket(PacketKind::kTip, IpCompression::kFull,
                                   0x00cccccccccc4000)) == "6: 00cccccccccc4000");
}

TEST_CASE("packet names follow ptdump") {
  Packet packet;
  packet.kind = PacketKind::kTipPge;
  CHECK(PacketName(packet) == "tip.pge");
  packet.kind = PacketKind::kMode;
  packet.mode.leaf = kModeLeafExec;
  CHECK(PacketName(packet) == "mode.exec");
  packet.mode.leaf = kModeLeafTsx;
  CHECK(PacketName(packet) == "mode.tsx");
  packet.kind = PacketKind::kTnt64;
  CHECK(PacketName(packet) == "tnt.64");
}

TEST_CASE("TNT bits print oldest first, taken as '!'") {
  Packet packet;
  packet.kind = PacketKind::kTnt8;
  packet.tnt = {5, 0b10001};
  CHECK(PacketPayloadText(packet) == "!...!");
}

TEST_CASE("mode, pip, timing and power payloads") {
  Packet packet;
  packet.kind = PacketKind::kMode;
  packet.mode.leaf = kModeLeafExec;
  CHECK(PacketPayloadText(packet).empty());
  packet.mode.csl = true;
  packet.mode.csd = true;
  CHECK(PacketPayloadText(packet) == "cs.d, cs.l");
  CHECK(ExecModeOf(packet.mode) == ExecMode::kUnknown);
  packet.mode.csd = false;
  CHECK(ExecModeOf(packet.mode) == ExecMode::k64Bit);
  CHECK(std::string(ExecModeName(ExecModeOf(packet.mode))) == "64-bit");

  Packet pip;
  pip.kind = PacketKind::kPip;
  pip.cr3 = 0xafafa0;
  pip.pip_nr = true;
  CHECK(PacketPayloadText(pip) == "afafa0, nr");

  Packet tma;
  tma.kind = PacketKind::kTma;
  tma.tma_ctc = 0x12;
  tma.tma_fc = 0x34;
  CHECK(PacketPayloadText(tma) == "12, 34");

  Packet pwrx;
  pwrx.kind = PacketKind::kPwrx;
  pwrx.pwrx = {0, 5, false, true, false};
  CHECK(PacketPayloadText(pwrx) == " st: c1, c6");
  pwrx.pwrx.interrupt = true;  // two reasons at once
  CHECK(PacketPayloadText(pwrx) == "bad: c1, c6");

  Packet pwre;
  pwre.kind = PacketKind::kPwre;
  pwre.pwre = {0xf, 0xf, true};
  CHECK(PacketPayloadText(pwre) == "c0.0, hw");
}

TEST_CASE("sign extension from 48 bits") {
  CHECK(SignExtend(0x800000000000, 48) == 0xffff800000000000);
  CHECK(SignExtend(0x7fffffffffff, 48) == 0x7fffffffffff);
  CHECK(SignExtend(0xffff123412341234, 48) == 0x123412341234);
}
