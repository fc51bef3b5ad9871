#pragma once
// PtxedOptions answers "what did the user ask libipt's ptxed to do?" for `ptprof decode --format
// ptxed`: it parses ptxed's own option spellings (e.g. "--block:show-blocks", which CLI11 cannot
// name) with ptxed's rules: options are read left to right, and the decoder configuration is
// fixed when --pt is read (CPU, filters and decoder type may not follow it; later timing options
// have no effect). No libipt types here.
#include <string>
#include <vector>

#include "decoders/pt/flow_options.h"
#include "decoders/pt/pevent_options.h"
#include "decoders/pt/pt_params.h"
#include "sideband/image_spec.h"
#include "src/model/result.h"

namespace ptprof::pt {

struct PtxedImage {
  bool elf = false;
  RawImageSpec raw;
  ElfImageSpec elf_spec;
};

struct PtxedRequest {
  bool help = false;
  bool version = false;
  FileRangeSpec pt;
  bool has_pt = false;
  std::vector<PtxedImage> images;  // in command-line order
  PtParams params;                 // as of --pt
  FlowOptions flow;                // as of --pt
  bool verbose = false;
  // Printing options (PtxedPrintOptions mirrors these; kept libipt-free here).
  bool no_inst = false, quiet = false, print_offset = false, print_time = false;
  bool raw_insn = false, att = false, check = false, event_time = false, event_ip = false;
  bool show_blocks = false, stats = false, stat_insn = false, stat_blocks = false;
  SidebandRequest sideband;  // --pevent:* files and --sb:* display
};

// Why parsing failed: a usage error (exit 2) or an input error (exit 1).
struct PtxedParseError {
  bool usage = true;
  std::string message;
};

// Parses `args` (without the program and subcommand names). Errors carry one line for stderr.
tl::expected<PtxedRequest, PtxedParseError> ParsePtxedArgs(const std::vector<std::string>& args);

// ptxed's option summary, adapted to ptprof.
std::string PtxedHelp();

}  // namespace ptprof::pt
