#pragma once
// FlowOptions: which libipt flow decoder to run and how (no libipt types, so that command-line
// code can fill it).
namespace ptprof::pt {

struct FlowOptions {
  bool insn_decoder = false;  // libipt's instruction decoder instead of the block decoder
  bool end_on_call = false;   // block decoder: end a block after a call
  bool end_on_jump = false;   // block decoder: end a block after a jump
  bool tick_events = false;   // report timing packets as tick events
};

}  // namespace ptprof::pt
