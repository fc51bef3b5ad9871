// ptprof info: what an input holds.
#include <cstdio>
#include <memory>
#include <string>

#include <sys/stat.h>

#include "src/cli/command.h"
#include "src/pipeline/input_kind.h"

namespace ptprof::cli {

namespace {
struct InfoOptions {
  std::string input;
};
}  // namespace

Command AddInfoCommand(CLI::App& parent) {
  auto options = std::make_shared<InfoOptions>();
  CLI::App* app = parent.add_subcommand("info", "Show what a trace input holds");
  app->add_option("input", options->input, "trace input (raw PT, perf.data, .ptar, snapshot dir)")
      ->required();
  return {app, [options] {
            auto kind = ClassifyPath(options->input);
            if (!kind) return ReportBadInput(kind.error().message);
            struct stat st {};
            stat(options->input.c_str(), &st);
            std::printf("input:  %s\nkind:   %s\nsize:   %lld bytes\n", options->input.c_str(),
                        InputKindName(*kind), static_cast<long long>(st.st_size));
            if (*kind == InputKind::kUnknown)
              return ReportBadInput(options->input + ": not a trace ptprof can read (no PSB, no known magic)");
            return kExitOk;
          }};
}

}  // namespace ptprof::cli
