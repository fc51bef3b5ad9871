#include "src/model/block_batch.h"

namespace ptprof {

void PackBlock(const TraceEvent& event, PackedEvent& out) {
  const ExecBlock& block = std::get<ExecBlock>(event.body);
  out.first_ip_or_index = block.first_ip;
  out.tsc = event.header.tsc;
  out.offset = event.header.offset;
  out.span = static_cast<uint32_t>(block.last_ip - block.first_ip);
  out.insns = block.insns;
  out.last_insn_size = block.last_insn_size;
  out.end = static_cast<uint8_t>(block.end);
  out.mode = static_cast<uint8_t>(block.mode);
  out.flags = (block.speculative ? kPackedSpeculative : 0) | (block.truncated ? kPackedTruncated : 0);
  out.context = 0;
}

void UnpackExecBlock(const PackedEvent& p, ExecBlock& block) {
  block.first_ip = p.first_ip_or_index;
  block.last_ip = p.first_ip_or_index + p.span;
  block.insns = p.insns;
  block.last_insn_size = p.last_insn_size;
  block.end = static_cast<BlockEnd>(p.end);
  block.mode = static_cast<ExecMode>(p.mode);
  block.speculative = (p.flags & kPackedSpeculative) != 0;
  block.truncated = (p.flags & kPackedTruncated) != 0;
  block.end_time_ns = kUnknownTime;
}

void UnpackBlock(const PackedEvent& p, int32_t cpu, int32_t pid, int32_t tid, TraceEvent& out) {
  auto* block = std::get_if<ExecBlock>(&out.body);
  if (!block) block = &out.body.emplace<ExecBlock>();
  UnpackExecBlock(p, *block);
  EventHeader& h = out.header;
  h.time_ns = kUnknownTime;
  h.tsc = p.tsc;
  h.offset = p.offset;
  h.cpu = cpu;
  h.pid = pid;
  h.tid = tid;
}

}  // namespace ptprof
