#include "decoders/pt/ptxed_printer.h"

#include <cinttypes>
#include <cstring>

#include "decoders/pt/flow_config.h"

namespace ptprof::pt {

namespace {

const char* ModeText(pt_exec_mode mode) {
  switch (mode) {
    case ptem_unknown: return "<unknown>";
    case ptem_16bit: return "16-bit";
    case ptem_32bit: return "32-bit";
    case ptem_64bit: return "64-bit";
  }
  return "<invalid>";
}

const char* IclassText(pt_insn_class iclass) {
  switch (iclass) {
    case ptic_error: return "unknown/error";
    case ptic_other: return "other";
    case ptic_call: return "near call";
    case ptic_return: return "near return";
    case ptic_jump: return "near jump";
    case ptic_cond_jump: return "cond jump";
    case ptic_far_call: return "far call";
    case ptic_far_return: return "far return";
    case ptic_far_jump: return "far jump";
    case ptic_ptwrite: return "ptwrite";
  }
  return "undefined";
}

// Does libipt's classification of an instruction agree with the x86 decoder's? The pairs are
// those ptxed accepts from XED: far calls include software interrupts, syscalls and VM calls; far
// returns include iret, sysret and VM entries; transactions and bound count as "other".
bool IclassAgrees(pt_insn_class iclass, X86Kind kind) {
  switch (iclass) {
    case ptic_error: return true;
    case ptic_other:
    case ptic_ptwrite:
      return kind == X86Kind::kOther || kind == X86Kind::kVmCall || kind == X86Kind::kVmEntry;
    case ptic_call: return kind == X86Kind::kCallNear;
    case ptic_return: return kind == X86Kind::kRetNear;
    case ptic_jump: return kind == X86Kind::kJumpNear;
    case ptic_cond_jump: return kind == X86Kind::kCondJump;
    case ptic_far_call:
      return kind == X86Kind::kCallFar || kind == X86Kind::kInterrupt ||
             kind == X86Kind::kSyscall || kind == X86Kind::kVmCall;
    case ptic_far_return:
      return kind == X86Kind::kRetFar || kind == X86Kind::kIret || kind == X86Kind::kSysret ||
             kind == X86Kind::kVmEntry;
    case ptic_far_jump: return kind == X86Kind::kJumpFar;
  }
  return false;
}

}  // namespace

PtxedPrinter::PtxedPrinter(std::FILE* out, const PtxedPrintOptions& options,
                           const PtImageCache& images)
    : out_(out), options_(options), images_(images) {}

void PtxedPrinter::OnEvent(const pt_event& event, uint64_t offset) {
  time_ = event.tsc;
  if (!options_.quiet && !event.status_update) PrintEvent(event, offset);
}

void PtxedPrinter::PrintEvent(const pt_event& ev, uint64_t offset) {
  std::FILE* o = out_;
  const bool ip = options_.event_ip;
  const bool has_ip = !ev.ip_suppressed;
  std::fputc('[', o);
  if (options_.print_offset) std::fprintf(o, "%016" PRIx64 "  ", offset);
  if (options_.event_time && ev.has_tsc) std::fprintf(o, "%016" PRIx64 "  ", ev.tsc);
  switch (ev.type) {
    case ptev_enabled:
      std::fputs(ev.variant.enabled.resumed ? "resumed" : "enabled", o);
      if (ip) std::fprintf(o, ", ip: %016" PRIx64, ev.variant.enabled.ip);
      break;
    case ptev_disabled:
      std::fputs("disabled", o);
      if (ip && has_ip) std::fprintf(o, ", ip: %016" PRIx64, ev.variant.disabled.ip);
      break;
    case ptev_async_disabled:
      std::fputs("disabled", o);
      if (ip) {
        std::fprintf(o, ", at: %016" PRIx64, ev.variant.async_disabled.at);
        if (has_ip) std::fprintf(o, ", ip: %016" PRIx64, ev.variant.async_disabled.ip);
      }
      break;
    case ptev_async_branch:
      std::fputs("interrupt", o);
      if (ip) {
        std::fprintf(o, ", from: %016" PRIx64, ev.variant.async_branch.from);
        if (has_ip) std::fprintf(o, ", to: %016" PRIx64, ev.variant.async_branch.to);
      }
      break;
    case ptev_paging:
      std::fprintf(o, "paging, cr3: %016" PRIx64 "%s", ev.variant.paging.cr3,
                   ev.variant.paging.non_root ? ", nr" : "");
      break;
    case ptev_async_paging:
      std::fprintf(o, "paging, cr3: %016" PRIx64 "%s", ev.variant.async_paging.cr3,
                   ev.variant.async_paging.non_root ? ", nr" : "");
      if (ip) std::fprintf(o, ", ip: %016" PRIx64, ev.variant.async_paging.ip);
      break;
    case ptev_overflow:
      std::fputs("overflow", o);
      if (ip && has_ip) std::fprintf(o, ", ip: %016" PRIx64, ev.variant.overflow.ip);
      break;
    case ptev_exec_mode:
      std::fprintf(o, "exec mode: %s", ModeText(ev.variant.exec_mode.mode));
      if (ip && has_ip) std::fprintf(o, ", ip: %016" PRIx64, ev.variant.exec_mode.ip);
      break;
    case ptev_tsx:
      if (ev.variant.tsx.aborted) {
        std::fputs("aborted", o);
      } else if (ev.variant.tsx.speculative) {
        std::fputs("begin transaction", o);
      } else {
        std::fputs("committed", o);
      }
      if (ip && has_ip) std::fprintf(o, ", ip: %016" PRIx64, ev.variant.tsx.ip);
      break;
    case ptev_stop: std::fputs("stopped", o); break;
    case ptev_vmcs: std::fprintf(o, "vmcs, base: %016" PRIx64, ev.variant.vmcs.base); break;
    case ptev_async_vmcs:
      std::fprintf(o, "vmcs, base: %016" PRIx64, ev.variant.async_vmcs.base);
      if (ip) std::fprintf(o, ", ip: %016" PRIx64, ev.variant.async_vmcs.ip);
      break;
    case ptev_exstop:
      std::fputs("exstop", o);
      if (ip && has_ip) std::fprintf(o, ", ip: %016" PRIx64, ev.variant.exstop.ip);
      break;
    case ptev_mwait:
      std::fprintf(o, "mwait %" PRIx32 " %" PRIx32, ev.variant.mwait.hints, ev.variant.mwait.ext);
      if (ip && has_ip) std::fprintf(o, ", ip: %016" PRIx64, ev.variant.mwait.ip);
      break;
    case ptev_pwre:
      std::fprintf(o, "pwre c%u.%u", (ev.variant.pwre.state + 1u) & 0xfu,
                   (ev.variant.pwre.sub_state + 1u) & 0xfu);
      if (ev.variant.pwre.hw) std::fputs(" hw", o);
      break;
    case ptev_pwrx:
      std::fputs("pwrx ", o);
      if (ev.variant.pwrx.interrupt) std::fputs("int: ", o);
      if (ev.variant.pwrx.store) std::fputs("st: ", o);
      if (ev.variant.pwrx.autonomous) std::fputs("hw: ", o);
      std::fprintf(o, "c%u (c%u)", (ev.variant.pwrx.last + 1u) & 0xfu,
                   (ev.variant.pwrx.deepest + 1u) & 0xfu);
      break;
    case ptev_ptwrite:
      std::fprintf(o, "ptwrite: %" PRIx64, ev.variant.ptwrite.payload);
      if (ip && has_ip) std::fprintf(o, ", ip: %016" PRIx64, ev.variant.ptwrite.ip);
      break;
    case ptev_tick:
      std::fputs("tick", o);
      if (ip && has_ip) std::fprintf(o, ", ip: %016" PRIx64, ev.variant.tick.ip);
      break;
    case ptev_cbr: std::fprintf(o, "cbr: %x", ev.variant.cbr.ratio); break;
    case ptev_mnt: std::fprintf(o, "mnt: %" PRIx64, ev.variant.mnt.payload); break;
  }
  std::fputs("]\n", o);
}

void PtxedPrinter::PrintRawBytes(const uint8_t* raw, uint8_t size) {
  uint8_t i = 0;
  for (; i < size && i < pt_max_insn_size; ++i) std::fprintf(out_, " %02x", raw[i]);
  for (; i < pt_max_insn_size; ++i) std::fputs("   ", out_);
}

void PtxedPrinter::PrintDisassembly(const uint8_t* raw, uint8_t size, ExecMode mode, uint64_t ip) {
  auto insn = x86_.Decode(raw, size, mode);
  if (options_.raw_insn) PrintRawBytes(raw, insn ? insn->length : size);
  auto text = x86_.Format(raw, size, mode, ip, options_.att);
  if (!text) {
    std::fputs(" [xed print error]", out_);
    return;
  }
  std::fprintf(out_, "  %s", text->c_str());
}

void PtxedPrinter::PrintInsn(const pt_insn& insn, uint64_t offset) {
  if (options_.print_offset) std::fprintf(out_, "%016" PRIx64 "  ", offset);
  if (options_.print_time) std::fprintf(out_, "%016" PRIx64 "  ", time_);
  if (insn.speculative) std::fputs("? ", out_);
  std::fprintf(out_, "%016" PRIx64, insn.ip);
  if (!options_.no_inst) {
    ExecMode mode = ToExecMode(insn.mode);
    if (x86_.Decode(insn.raw, insn.size, mode)) {
      PrintDisassembly(insn.raw, insn.size, mode, insn.ip);
    } else {
      PrintRawBytes(insn.raw, insn.size);
      std::fputs(" [xed decode error: (1) undecodable instruction]", out_);
    }
  }
  std::fputc('\n', out_);
}

void PtxedPrinter::OnInsn(const pt_insn& insn, const FlowStep& step) {
  if (!options_.quiet) PrintInsn(insn, step.offset);
  if (options_.stats) insns_ += 1;
  if (options_.check) CheckInsn(insn, step.offset);
}

int PtxedPrinter::FetchBlockInsn(const pt_block& block, uint64_t ip, uint8_t* raw,
                                 uint8_t& size) const {
  if (block.ninsn == 0) return -pte_invalid;
  if (ip == block.end_ip && block.truncated) {
    if (block.size == 0 || block.size > pt_max_insn_size) return -pte_bad_insn;
    std::memcpy(raw, block.raw, block.size);
    size = block.size;
    return 0;
  }
  int read = images_.Read(block.isid, ip, raw, pt_max_insn_size);
  if (read < 0) return read;
  size = static_cast<uint8_t>(read);
  return 0;
}

void PtxedPrinter::PrintBlock(const pt_block& block, const FlowStep& step) {
  if (options_.show_blocks) {
    std::fputs("[block", out_);
    if (options_.stats) std::fprintf(out_, " %" PRIx64, blocks_);
    std::fputs("]\n", out_);
  }
  uint16_t left = block.ninsn;
  if (left == 0) return;
  ExecMode mode = ToExecMode(block.mode);
  uint64_t ip = block.ip;
  for (;;) {
    if (options_.print_offset) std::fprintf(out_, "%016" PRIx64 "  ", step.offset);
    if (options_.print_time) std::fprintf(out_, "%016" PRIx64 "  ", time_);
    if (block.speculative) std::fputs("? ", out_);
    std::fprintf(out_, "%016" PRIx64, ip);
    uint8_t raw[pt_max_insn_size] = {};
    uint8_t size = 0;
    int status = FetchBlockInsn(block, ip, raw, size);
    if (status < 0) {
      std::fprintf(out_, " [fetch error: %s]\n", pt_errstr(pt_errcode(status)));
      break;
    }
    auto insn = x86_.Decode(raw, size, mode);
    if (!insn) {
      PrintRawBytes(raw, size);
      std::fputs(" [xed decode error: (1) undecodable instruction]\n", out_);
      break;
    }
    if (!options_.no_inst) PrintDisassembly(raw, size, mode, ip);
    std::fputc('\n', out_);
    if (--left == 0) break;
    ip = insn->NextIp(ip);
  }
  if (ip != block.end_ip) Diagnose(step.decoder_offset, ip, "reconstruct error", -pte_nosync);
}

void PtxedPrinter::OnBlock(const pt_block& block, const FlowStep& step) {
  if (options_.stats) {
    insns_ += block.ninsn;
    blocks_ += 1;
  }
  if (!options_.quiet) PrintBlock(block, step);
  if (options_.check) CheckBlock(block, step.offset);
}

void PtxedPrinter::Diagnose(uint64_t offset, uint64_t ip, const char* what, int code) {
  std::fprintf(out_, "[%" PRIx64 ", %" PRIx64 ": %s: %s]\n", offset, ip, what,
               pt_errstr(pt_errcode(code)));
}

void PtxedPrinter::OnError(const FlowError& error) {
  const char* what = error.kind == FlowError::Kind::kSync ? "sync error" : "error";
  if (!error.offset) {
    std::fprintf(out_, "could not determine offset: %s\n",
                 pt_errstr(pt_errcode(error.offset_error)));
    std::fprintf(out_, "[?, %" PRIx64 ": %s: %s]\n", error.ip, what,
                 pt_errstr(pt_errcode(error.code)));
    return;
  }
  Diagnose(*error.offset, error.ip, what, error.code);
}

void PtxedPrinter::OnEndOfTrace() {
  if (!options_.quiet) std::fputs("[end of trace]\n", out_);
}

void PtxedPrinter::CheckClass(pt_insn_class iclass, const X86Insn& insn, uint64_t ip,
                              uint64_t offset) {
  if (IclassAgrees(iclass, insn.kind)) return;
  std::fprintf(out_,
               "[%" PRIx64 ", %" PRIx64 ": iclass error: iclass: %s, xed iclass: %s, "
               "category: %s]\n",
               offset, ip, IclassText(iclass), insn.mnemonic, X86KindName(insn.kind));
}

void PtxedPrinter::CheckInsn(const pt_insn& insn, uint64_t offset) {
  if (insn.isid <= 0)
    std::fprintf(out_, "[%" PRIx64 ", %" PRIx64 ": check error: bad isid]\n", offset, insn.ip);
  auto decoded = x86_.Decode(insn.raw, insn.size, ToExecMode(insn.mode));
  if (!decoded) {
    std::fprintf(out_, "[%" PRIx64 ", %" PRIx64 ": xed error: (1) undecodable instruction]\n",
                 offset, insn.ip);
    return;
  }
  CheckClass(insn.iclass, *decoded, insn.ip, offset);
}

void PtxedPrinter::CheckBlock(const pt_block& block, uint64_t offset) {
  uint16_t left = block.ninsn;
  if (left == 0) return;
  if (block.isid <= 0)
    std::fprintf(out_, "[%" PRIx64 ", %" PRIx64 ": check error: bad isid]\n", offset, block.ip);
  ExecMode mode = ToExecMode(block.mode);
  uint64_t ip = block.ip;
  uint64_t last_ip = ip;
  X86Insn last;
  do {
    uint8_t raw[pt_max_insn_size] = {};
    uint8_t size = 0;
    int status = FetchBlockInsn(block, ip, raw, size);
    if (status < 0) {
      std::fprintf(out_, "[%" PRIx64 ", %" PRIx64 ": fetch error: %s]\n", offset, ip,
                   pt_errstr(pt_errcode(status)));
      return;
    }
    auto insn = x86_.Decode(raw, size, mode);
    if (!insn) {
      std::fprintf(out_, "[%" PRIx64 ", %" PRIx64 ": xed error: (1) undecodable instruction]\n",
                   offset, ip);
      return;
    }
    last = *insn;
    last_ip = ip;
    ip = insn->NextIp(ip);
  } while (--left);
  if (last_ip != block.end_ip)
    std::fprintf(out_, "[%" PRIx64 ", %" PRIx64 ": error: did not reach end: %" PRIx64 "]\n",
                 offset, last_ip, block.end_ip);
  if (block.iclass != ptic_error) CheckClass(block.iclass, last, last_ip, offset);
}

void PtxedPrinter::PrintStats() const {
  bool insn = options_.stat_insn;
  bool blocks = options_.stat_blocks;
  if (insn) std::fprintf(out_, "insn: %" PRIu64 ".\n", insns_);
  if (blocks) std::fprintf(out_, "blocks:\t%" PRIu64 ".\n", blocks_);
}

}  // namespace ptprof::pt
