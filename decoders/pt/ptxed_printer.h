#pragma once
// PtxedPrinter answers "what would libipt 2.0.5's ptxed print for this decode?": it is a
// FlowObserver that writes ptxed's text byte for byte (instructions, events, errors, --check
// diagnostics with Zydis standing in for XED, and statistics).
#include <cstdint>
#include <cstdio>

#include "decoders/pt/flow_observer.h"
#include "decoders/pt/image_cache.h"
#include "sideband/x86_insn.h"

namespace ptprof::pt {

struct PtxedPrintOptions {
  bool no_inst = false;      // --no-inst: addresses only
  bool quiet = false;        // --quiet: nothing but errors and statistics
  bool print_offset = false; // --offset
  bool print_time = false;   // --time
  bool raw_insn = false;     // --raw-insn
  bool att = false;          // --att
  bool check = false;        // --check
  bool event_time = false;   // --event:time
  bool event_ip = false;     // --event:ip
  bool show_blocks = false;  // --block:show-blocks
  bool stats = false;        // --stat (or any --stat:*)
  bool stat_insn = false;    // which statistics to print (ptxed picks all when none is named)
  bool stat_blocks = false;
};

class PtxedPrinter : public FlowObserver {
 public:
  PtxedPrinter(std::FILE* out, const PtxedPrintOptions& options, const PtImageCache& images);

  void OnEvent(const pt_event& event, uint64_t offset) override;
  void OnBlock(const pt_block& block, const FlowStep& step) override;
  void OnInsn(const pt_insn& insn, const FlowStep& step) override;
  void OnError(const FlowError& error) override;
  void OnEndOfTrace() override;

  // Prints the statistics lines (call after the decode when options.stats is set).
  void PrintStats() const;

 private:
  void PrintEvent(const pt_event& event, uint64_t offset);
  void PrintInsn(const pt_insn& insn, uint64_t offset);
  void PrintBlock(const pt_block& block, const FlowStep& step);
  void PrintDisassembly(const uint8_t* raw, uint8_t size, ExecMode mode, uint64_t ip);
  void PrintRawBytes(const uint8_t* raw, uint8_t size);
  void Diagnose(uint64_t offset, uint64_t ip, const char* what, int code);
  // Reads the bytes of the instruction at `ip` in `block`; libipt error code (< 0) on failure.
  int FetchBlockInsn(const pt_block& block, uint64_t ip, uint8_t* raw, uint8_t& size) const;
  void CheckInsn(const pt_insn& insn, uint64_t offset);
  void CheckBlock(const pt_block& block, uint64_t offset);
  void CheckClass(pt_insn_class iclass, const X86Insn& insn, uint64_t ip, uint64_t offset);

  std::FILE* out_;
  PtxedPrintOptions options_;
  const PtImageCache& images_;
  X86Decoder x86_;
  uint64_t time_ = 0;  // ptxed's notion of "now": the time stamp of the last event
  uint64_t insns_ = 0;
  uint64_t blocks_ = 0;
};

}  // namespace ptprof::pt
