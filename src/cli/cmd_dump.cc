// ptprof dump (being written; see the foundation issue).
#include "src/cli/command.h"

namespace ptprof::cli {

Command AddDumpCommand(CLI::App& parent) {
  CLI::App* app = parent.add_subcommand("dump", "dump a trace");
  return {app, [] { return ReportBadInput("dump: not available in this build"); }};
}

}  // namespace ptprof::cli
