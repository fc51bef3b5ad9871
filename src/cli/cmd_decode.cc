// ptprof decode (being written; see the foundation issue).
#include "src/cli/command.h"

namespace ptprof::cli {

Command AddDecodeCommand(CLI::App& parent) {
  CLI::App* app = parent.add_subcommand("decode", "decode a trace");
  return {app, [] { return ReportBadInput("decode: not available in this build"); }};
}

}  // namespace ptprof::cli
