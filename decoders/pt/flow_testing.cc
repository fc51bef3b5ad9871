#include "decoders/pt/flow_testing.h"

#include <cstdio>
#include <cstdlib>
#include <stdexcept>

#include <unistd.h>

namespace ptprof::pt::testing {

TempFile::TempFile(const std::vector<uint8_t>& bytes) {
  char path[] = "/tmp/ptprof_flow_XXXXXX";
  int fd = mkstemp(path);
  if (fd < 0) throw std::runtime_error("mkstemp failed");
  if (!bytes.empty() && write(fd, bytes.data(), bytes.size()) != static_cast<ssize_t>(bytes.size()))
    throw std::runtime_error("write failed");
  close(fd);
  path_ = path;
}

TempFile::~TempFile() { std::remove(path_.c_str()); }

PacketWriter& PacketWriter::Emit(const pt_packet& packet) {
  uint8_t buffer[64];
  pt_config config;
  pt_config_init(&config);
  config.begin = buffer;
  config.end = buffer + sizeof buffer;
  pt_encoder* encoder = pt_alloc_encoder(&config);
  if (!encoder) throw std::runtime_error("pt_alloc_encoder failed");
  pt_packet copy = packet;
  int size = pt_enc_next(encoder, &copy);
  pt_free_encoder(encoder);
  if (size < 0) throw std::runtime_error(std::string("pt_enc_next: ") + pt_errstr(pt_errcode(size)));
  bytes_.insert(bytes_.end(), buffer, buffer + size);
  return *this;
}

namespace {
pt_packet Packet(pt_packet_type type) {
  pt_packet p{};
  p.type = type;
  return p;
}
pt_packet IpPacket(pt_packet_type type, uint64_t ip, pt_ip_compression ipc) {
  pt_packet p = Packet(type);
  p.payload.ip.ipc = ipc;
  p.payload.ip.ip = ip;
  return p;
}
}  // namespace

PacketWriter& PacketWriter::Psb() { return Emit(Packet(ppt_psb)); }
PacketWriter& PacketWriter::PsbEnd() { return Emit(Packet(ppt_psbend)); }
PacketWriter& PacketWriter::Ovf() { return Emit(Packet(ppt_ovf)); }

PacketWriter& PacketWriter::Tsc(uint64_t tsc) {
  pt_packet p = Packet(ppt_tsc);
  p.payload.tsc.tsc = tsc;
  return Emit(p);
}

PacketWriter& PacketWriter::Cbr(uint8_t ratio) {
  pt_packet p = Packet(ppt_cbr);
  p.payload.cbr.ratio = ratio;
  return Emit(p);
}

PacketWriter& PacketWriter::ModeExec(pt_exec_mode mode) {
  pt_packet p = Packet(ppt_mode);
  p.payload.mode.leaf = pt_mol_exec;
  p.payload.mode.bits.exec = pt_set_exec_mode(mode);
  return Emit(p);
}

PacketWriter& PacketWriter::TipPge(uint64_t ip) {
  return Emit(IpPacket(ppt_tip_pge, ip, pt_ipc_sext_48));
}
PacketWriter& PacketWriter::TipPgdSuppressed() {
  return Emit(IpPacket(ppt_tip_pgd, 0, pt_ipc_suppressed));
}
PacketWriter& PacketWriter::Tip(uint64_t ip) { return Emit(IpPacket(ppt_tip, ip, pt_ipc_sext_48)); }
PacketWriter& PacketWriter::Fup(uint64_t ip) { return Emit(IpPacket(ppt_fup, ip, pt_ipc_sext_48)); }

PacketWriter& PacketWriter::Tnt(uint64_t bits, uint8_t count) {
  pt_packet p = Packet(ppt_tnt_8);
  p.payload.tnt.bit_size = count;
  p.payload.tnt.payload = bits;
  return Emit(p);
}

PacketWriter& PacketWriter::Raw(std::vector<uint8_t> bytes) {
  bytes_.insert(bytes_.end(), bytes.begin(), bytes.end());
  return *this;
}

std::vector<uint8_t> SampleProgram() {
  std::vector<uint8_t> code(0x20, 0x90);
  const uint8_t je[] = {0x74, 0x02};
  const uint8_t call[] = {0xe8, 0x06, 0x00, 0x00, 0x00};
  const uint8_t syscall[] = {0x0f, 0x05};
  std::copy(std::begin(je), std::end(je), code.begin() + 0x1);
  std::copy(std::begin(call), std::end(call), code.begin() + 0x5);
  std::copy(std::begin(syscall), std::end(syscall), code.begin() + 0xa);
  code[0x11] = 0xc3;
  return code;
}

std::vector<uint8_t> SampleTrace(uint64_t tsc) {
  PacketWriter w;
  w.Psb().Tsc(tsc).ModeExec(ptem_64bit).PsbEnd();
  w.TipPge(kSampleBase);
  w.Tnt(0b11, 2);  // je taken, ret compressed
  w.TipPgdSuppressed();
  return w.bytes();
}

}  // namespace ptprof::pt::testing
