#include "decoders/pt/flow_decoder.h"

#include <cstring>

namespace ptprof::pt {

FlowDecoder::FlowDecoder(const pt_config& config, const FlowOptions& options,
                         std::span<const uint8_t> trace, const PtImageCache& images)
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
  if (auto st = images_.Realize(); !st) return st;
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

// libipt's block and instruction decoders share one shape; the loop below is written once
// against this table of their entry points.
template <class Decoder, class Unit>
struct DecoderApi {
  int (*sync_forward)(Decoder*);
  int (*get_offset)(const Decoder*, uint64_t*);
  int (*event)(Decoder*, pt_event*, size_t);
  int (*next)(Decoder*, Unit*, size_t);
  int (*time)(Decoder*, uint64_t*, uint32_t*, uint32_t*);
  int (*set_image)(Decoder*, pt_image*);
};

const DecoderApi<pt_block_decoder, pt_block> kBlockApi{
    pt_blk_sync_forward, pt_blk_get_offset, pt_blk_event, pt_blk_next, pt_blk_time, pt_blk_set_image};
const DecoderApi<pt_insn_decoder, pt_insn> kInsnApi{
    pt_insn_sync_forward, pt_insn_get_offset, pt_insn_event, pt_insn_next, pt_insn_time, pt_insn_set_image};

template <class Decoder, class Unit>
FlowStep StepAt(const DecoderApi<Decoder, Unit>& api, Decoder* dec, uint64_t offset) {
  FlowStep step;
  step.offset = offset;
  api.get_offset(dec, &step.decoder_offset);
  uint64_t tsc = 0;
  uint32_t lost_mtc = 0, lost_cyc = 0;
  if (api.time(dec, &tsc, &lost_mtc, &lost_cyc) >= 0) step.tsc = tsc;
  return step;
}

// Decodes to the end: synchronise, drain pending events, take the next block or instruction,
// report an error and resynchronise at the next PSB. `emit(unit, step, complete)` reports a unit
// (complete = false: the one cut short by an error), `error_ip(unit, status)` names where it failed.
// `image_switch` (may be empty) is asked which image to read before each unit and each event.
template <class Decoder, class Unit, class Emit, class ErrorIp, class MakeErrorFn>
bool DecodeLoop(const DecoderApi<Decoder, Unit>& api, Decoder* dec, FlowObserver& observer,
                Emit emit, ErrorIp error_ip, MakeErrorFn make_error,
                const FlowDecoder::ImageSwitchHook& image_switch) {
  bool synced = false;
  uint64_t last_sync = 0;
  for (;;) {
    Unit unit;
    std::memset(&unit, 0, sizeof unit);
    int status = api.sync_forward(dec);
    if (status < 0) {
      if (status == -pte_eos) break;
      observer.OnError(make_error(FlowError::Kind::kSync, status, error_ip(unit, status)));
      // Give up when a resync makes no progress: it never will.
      uint64_t now = 0;
      if (api.get_offset(dec, &now) < 0 || now <= last_sync) break;
      last_sync = now;
      continue;
    }
    synced = true;
    for (;;) {
      if (image_switch) {
        const FlowStep now = StepAt(api, dec, 0);
        pt_image* image = image_switch(now.tsc, now.decoder_offset);
        const int set = image ? api.set_image(dec, image) : 0;
        if (set < 0) {
          status = set;
          break;
        }
      }
      while (status >= 0 && (status & pts_event_pending)) {
        uint64_t offset = 0;
        api.get_offset(dec, &offset);
        pt_event event;
        status = api.event(dec, &event, sizeof event);
        if (status >= 0 && image_switch) {
          // An event with its own time may be the first of another task.
          const std::optional<uint64_t> tsc =
              event.has_tsc ? std::optional<uint64_t>(event.tsc) : StepAt(api, dec, 0).tsc;
          pt_image* image = image_switch(tsc, offset);
          const int set = image ? api.set_image(dec, image) : 0;
          if (set < 0) status = set;
        }
        if (status >= 0) {
          observer.OnEvent(event, offset);
          if (pt_image* image = observer.ImageAfterEvent()) {
            const int set = api.set_image(dec, image);
            if (set < 0) status = set;
          }
        }
      }
      if (status < 0) break;
      if (status & pts_eos) {
        if (!(status & pts_ip_suppressed)) observer.OnEndOfTrace();
        status = -pte_eos;
        break;
      }
      uint64_t offset = 0;
      status = api.get_offset(dec, &offset);
      if (status < 0) break;
      status = api.next(dec, &unit, sizeof unit);
      if (status < 0) {
        emit(unit, StepAt(api, dec, offset), false);
        break;
      }
      emit(unit, StepAt(api, dec, offset), true);
    }
    if (status == -pte_eos) break;
    if (status >= 0) status = -pte_internal;
    observer.OnError(make_error(FlowError::Kind::kDecode, status, error_ip(unit, status)));
  }
  return synced;
}

}  // namespace

Status FlowDecoder::RunBlocks(FlowObserver& observer) {
  auto make_error = [this](FlowError::Kind kind, int code, uint64_t ip) {
    return MakeError(kind, code, ip);
  };
  synced_ = DecodeLoop(
      kBlockApi, blk_, observer,
      [&](const pt_block& block, const FlowStep& step, bool complete) {
        // A block cut short by an error still reports the instructions it holds.
        if (complete || block.ninsn) observer.OnBlock(block, step);
      },
      [this](const pt_block& block, int status) { return BlockErrorIp(block, status); },
      make_error, image_switch_);
  return {};
}

Status FlowDecoder::RunInsns(FlowObserver& observer) {
  auto make_error = [this](FlowError::Kind kind, int code, uint64_t ip) {
    return MakeError(kind, code, ip);
  };
  synced_ = DecodeLoop(
      kInsnApi, insn_, observer,
      [&](const pt_insn& insn, const FlowStep& step, bool complete) {
        // The instruction decoded just before an error is reported too.
        if (complete || insn.iclass != ptic_error) observer.OnInsn(insn, step);
      },
      [](const pt_insn& insn, int) { return insn.ip; },
      make_error, image_switch_);
  return {};
}

}  // namespace ptprof::pt
