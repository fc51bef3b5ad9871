#pragma once
// Test helper: builds small raw PT buffers with libipt's packet encoder, so the packet layer's
// tests decode genuine encodings rather than hand-written bytes.
#include <intel-pt.h>

#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <stdexcept>
#include <vector>

namespace ptprof::pt::testing {

inline pt_packet MakePacket(pt_packet_type type) {
  pt_packet packet;
  std::memset(&packet, 0, sizeof packet);
  packet.type = type;
  return packet;
}

inline pt_packet Psb() { return MakePacket(ppt_psb); }
inline pt_packet PsbEnd() { return MakePacket(ppt_psbend); }
inline pt_packet Pad() { return MakePacket(ppt_pad); }
inline pt_packet Ovf() { return MakePacket(ppt_ovf); }

inline pt_packet Ip(pt_packet_type type, pt_ip_compression ipc, uint64_t ip) {
  pt_packet packet = MakePacket(type);
  packet.payload.ip.ipc = ipc;
  packet.payload.ip.ip = ip;
  return packet;
}

inline pt_packet Tnt8(uint8_t bits, uint64_t payload) {
  pt_packet packet = MakePacket(ppt_tnt_8);
  packet.payload.tnt.bit_size = bits;
  packet.payload.tnt.payload = payload;
  return packet;
}

inline pt_packet ModeExec(bool csl, bool csd) {
  pt_packet packet = MakePacket(ppt_mode);
  packet.payload.mode.leaf = pt_mol_exec;
  packet.payload.mode.bits.exec.csl = csl;
  packet.payload.mode.bits.exec.csd = csd;
  return packet;
}

inline pt_packet Pip(uint64_t cr3, bool nr) {
  pt_packet packet = MakePacket(ppt_pip);
  packet.payload.pip.cr3 = cr3;
  packet.payload.pip.nr = nr;
  return packet;
}

inline pt_packet Tsc(uint64_t tsc) {
  pt_packet packet = MakePacket(ppt_tsc);
  packet.payload.tsc.tsc = tsc;
  return packet;
}

inline pt_packet Cbr(uint8_t ratio) {
  pt_packet packet = MakePacket(ppt_cbr);
  packet.payload.cbr.ratio = ratio;
  return packet;
}

inline pt_packet Tma(uint16_t ctc, uint16_t fc) {
  pt_packet packet = MakePacket(ppt_tma);
  packet.payload.tma.ctc = ctc;
  packet.payload.tma.fc = fc;
  return packet;
}

inline pt_packet Mtc(uint8_t ctc) {
  pt_packet packet = MakePacket(ppt_mtc);
  packet.payload.mtc.ctc = ctc;
  return packet;
}

inline pt_packet Cyc(uint64_t cycles) {
  pt_packet packet = MakePacket(ppt_cyc);
  packet.payload.cyc.value = cycles;
  return packet;
}

// The encoding of `packets`, back to back.
inline std::vector<uint8_t> Encode(std::initializer_list<pt_packet> packets) {
  std::vector<uint8_t> buffer(4096);
  pt_config config;
  pt_config_init(&config);
  config.begin = buffer.data();
  config.end = buffer.data() + buffer.size();
  pt_encoder* encoder = pt_alloc_encoder(&config);
  if (!encoder) throw std::runtime_error("pt_alloc_encoder failed");
  for (pt_packet packet : packets) {
    if (pt_enc_next(encoder, &packet) < 0) {
      pt_free_encoder(encoder);
      throw std::runtime_error("pt_enc_next failed");
    }
  }
  uint64_t size = 0;
  pt_enc_get_offset(encoder, &size);
  pt_free_encoder(encoder);
  buffer.resize(size);
  return buffer;
}

}  // namespace ptprof::pt::testing
