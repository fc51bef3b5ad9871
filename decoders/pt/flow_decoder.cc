#include "decoders/pt/flow_decoder.h"

#include <cstring>

namespace ptprof::pt {

FlowDecoder::FlowDecoder(const pt_config& config, const FlowOptions& options,
                         const std::vector<uint8_t>& trace, const PtImageCache& images)
    : config_(config), options_(options), images_(images) {
  config_.begin = const_cast<uint8_t*>(trace.data());
  config_.end = const_cast<uint8_t*>(trace.data()) + trace.size();
}

FlowDecoder::~FlowDecoder() {
  pt_blk_free_decoder(blk_);
  pt_insn_free_decoder(insn_);
}

Status FlowDecoder::Run(FlowObserver& observer) {
  if (blk_ || insn_) return Fail("a flow decoder runs once");
  if (config_.begin == config_.end) return Fail("the trace is empty");
  if (options_.insn_decoder) {
    insn_ = pt_insn_alloc_decoder(&config_);
    if (!insn_) return Fail("libipt refused the decoder configuration");
    int status = pt_insn_set_image(insn_, images_.image());
    if (status < 0) return Fail(std::string("cannot set the image: ") + pt_errstr(pt_errcode(status)));
    return RunInsns(observer);
  }
  blk_ = pt_blk_alloc_decoder(&config_);
  if (!blk_) return Fail("libipt refused the decoder configuration");
  int status = pt_blk_set_image(blk_, images_.image());
  if (status < 0) return Fail(std::string("cannot set the image: ") + pt_errstr(pt_errcode(status)));
  return RunBlocks(observer);
}

FlowError FlowDecoder::MakeError(FlowError::Kind kind, int code, uint64_t ip) const {
  FlowError error;
  error.kind = kind;
  error.code = code;
  error.ip = ip;
  uint64_t offset = 0;
  int status = blk_ ? pt_blk_get_offset(blk_, &offset) : pt_insn_get_offset(insn_, &offset);
  if (status < 0) {
    error.offset_error = status;
  } else {
    error.offset = offset;
  }
  return error;
}

// Where a block decode failed: the block's own IP when it is empty; after a failed fetch or
// decode of the next instruction, the address that follows the block's last instruction (its
// fall-through, or its direct branch target); otherwise the last instruction.
uint64_t FlowDecoder::BlockErrorIp(const pt_block& block, int code) const {
  if (block.ninsn == 0) return block.ip;
  uint64_t ip = block.end_ip;
  if (code != -pte_nomap && code != -pte_bad_insn) return ip;
  uint8_t raw[pt_max_insn_size];
  size_t size = 0;
  if (block.truncated) {
    if (block.size == 0 || block.size > sizeof raw) return ip;
    std::memcpy(raw, block.raw, block.size);
    size = block.size;
  } else {
    int read = images_.Read(block.isid, ip, raw, sizeof raw);
    if (read < 0) return ip;
    size = static_cast<size_t>(read);
  }
  auto insn = x86_.Decode(raw, size, ToExecMode(block.mode));
  if (!insn) return ip;
  return insn->NextIp(ip);
}

namespace {

FlowStep BlockStep(pt_block_decoder* dec, uint64_t offset) {
  FlowStep step;
  step.offset = offset;
  pt_blk_get_offset(dec, &step.decoder_offset);
  uint64_t tsc = 0;
  uint32_t lost_mtc = 0, lost_cyc = 0;
  if (pt_blk_time(dec, &tsc, &lost_mtc, &lost_cyc) >= 0) step.tsc = tsc;
  return step;
}

FlowStep InsnStep(pt_insn_decoder* dec, uint64_t offset) {
  FlowStep step;
  step.offset = offset;
  pt_insn_get_offset(dec, &step.decoder_offset);
  uint64_t tsc = 0;
  uint32_t lost_mtc = 0, lost_cyc = 0;
  if (pt_insn_time(dec, &tsc, &lost_mtc, &lost_cyc) >= 0) step.tsc = tsc;
  return step;
}

}  // namespace

Status FlowDecoder::RunBlocks(FlowObserver& observer) {
  uint64_t last_sync = 0;
  for (;;) {
    pt_block block;
    std::memset(&block, 0, sizeof block);
    int status = pt_blk_sync_forward(blk_);
    if (status < 0) {
      if (status == -pte_eos) break;
      observer.OnError(MakeError(FlowError::Kind::kSync, status, BlockErrorIp(block, status)));
      // Give up when a resync makes no progress: it never will.
      uint64_t now = 0;
      if (pt_blk_get_offset(blk_, &now) < 0 || now <= last_sync) break;
      last_sync = now;
      continue;
    }
    synced_ = true;
    for (;;) {
      while (status >= 0 && (status & pts_event_pending)) {
        uint64_t offset = 0;
        pt_blk_get_offset(blk_, &offset);
        pt_event event;
        status = pt_blk_event(blk_, &event, sizeof event);
        if (status >= 0) observer.OnEvent(event, offset);
      }
      if (status < 0) break;
      if (status & pts_eos) {
        if (!(status & pts_ip_suppressed)) observer.OnEndOfTrace();
        status = -pte_eos;
        break;
      }
      uint64_t offset = 0;
      status = pt_blk_get_offset(blk_, &offset);
      if (status < 0) break;
      status = pt_blk_next(blk_, &block, sizeof block);
      if (status < 0) {
        if (block.ninsn) observer.OnBlock(block, BlockStep(blk_, offset));
        break;
      }
      observer.OnBlock(block, BlockStep(blk_, offset));
    }
    if (status == -pte_eos) break;
    if (status >= 0) status = -pte_internal;
    observer.OnError(MakeError(FlowError::Kind::kDecode, status, BlockErrorIp(block, status)));
  }
  return {};
}

Status FlowDecoder::RunInsns(FlowObserver& observer) {
  uint64_t last_sync = 0;
  for (;;) {
    pt_insn insn;
    std::memset(&insn, 0, sizeof insn);
    int status = pt_insn_sync_forward(insn_);
    if (status < 0) {
      if (status == -pte_eos) break;
      observer.OnError(MakeError(FlowError::Kind::kSync, status, insn.ip));
      uint64_t now = 0;
      if (pt_insn_get_offset(insn_, &now) < 0 || now <= last_sync) break;
      last_sync = now;
      continue;
    }
    synced_ = true;
    for (;;) {
      while (status >= 0 && (status & pts_event_pending)) {
        uint64_t offset = 0;
        pt_insn_get_offset(insn_, &offset);
        pt_event event;
        status = pt_insn_event(insn_, &event, sizeof event);
        if (status >= 0) observer.OnEvent(event, offset);
      }
      if (status < 0) break;
      if (status & pts_eos) {
        if (!(status & pts_ip_suppressed)) observer.OnEndOfTrace();
        status = -pte_eos;
        break;
      }
      uint64_t offset = 0;
      status = pt_insn_get_offset(insn_, &offset);
      if (status < 0) break;
      status = pt_insn_next(insn_, &insn, sizeof insn);
      if (status < 0) {
        if (insn.iclass != ptic_error) observer.OnInsn(insn, InsnStep(insn_, offset));
        break;
      }
      observer.OnInsn(insn, InsnStep(insn_, offset));
    }
    if (status == -pte_eos) break;
    if (status >= 0) status = -pte_internal;
    observer.OnError(MakeError(FlowError::Kind::kDecode, status, insn.ip));
  }
  return {};
}

}  // namespace ptprof::pt
