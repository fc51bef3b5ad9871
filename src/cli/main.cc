// ptprof: decode and profile hardware instruction traces.
#include <cstdio>
#include <exception>
#include <new>
#include <string>
#include <system_error>
#include <vector>

#include "src/cli/command.h"

namespace ptprof::cli {

int ReportBadInput(const std::string& message) {
  std::fprintf(stderr, "ptprof: %s\n", message.c_str());
  return kExitBadInput;
}

namespace {

// If the arguments select a compatibility format ("--format ptdump" for dump, "--format ptxed" for
// decode, also spelled "--format=X"), returns that format's name and removes it from `args`.
std::string TakeCompatFormat(std::vector<std::string>& args, const std::string& wanted) {
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--") break;
    if (args[i] == "--format" && i + 1 < args.size() && args[i + 1] == wanted) {
      args.erase(args.begin() + static_cast<long>(i), args.begin() + static_cast<long>(i) + 2);
      return wanted;
    }
    if (args[i] == "--format=" + wanted) {
      args.erase(args.begin() + static_cast<long>(i));
      return wanted;
    }
  }
  return {};
}

}  // namespace

int Main(int argc, char** argv) {
  std::vector<std::string> all(argv + 1, argv + argc);
  if (!all.empty() && (all[0] == "dump" || all[0] == "decode")) {
    std::vector<std::string> rest(all.begin() + 1, all.end());
    if (all[0] == "dump" && !TakeCompatFormat(rest, "ptdump").empty()) return RunPtdumpCompat(rest);
    if (all[0] == "decode" && !TakeCompatFormat(rest, "ptxed").empty()) return RunPtxedCompat(rest);
  }

  CLI::App app{"ptprof: decode and profile Intel PT and Arm CoreSight instruction traces"};
  app.name("ptprof");
  app.set_version_flag("--version", std::string("ptprof ") + PTPROF_VERSION);
  app.require_subcommand(1);
  // Usage errors are one line, like every other error.
  app.failure_message([](const CLI::App*, const CLI::Error& e) {
    return std::string("ptprof: ") + e.what() + " (see --help)\n";
  });
  std::vector<Command> commands = {AddInfoCommand(app), AddDumpCommand(app), AddDecodeCommand(app),
                                   AddArchiveCommand(app), AddRecordCommand(app),
                                   AddExportCommand(app), AddDeltaCommand(app), AddStacksCommand(app), AddSyscallsCommand(app), AddImpactCommand(app), AddValidateCommand(app),
                                   AddSweepCommand(app)};
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? kExitOk : kExitUsage;
  }
  for (auto& command : commands) {
    if (command.app->parsed()) return command.run();
  }
  return kExitUsage;
}

}  // namespace ptprof::cli

int main(int argc, char** argv) {
  // What the system refuses (memory, a thread) ends the run with one line too, not an abort.
  try {
    return ptprof::cli::Main(argc, argv);
  } catch (const std::bad_alloc&) {
    std::fputs("ptprof: out of memory\n", stderr);
  } catch (const std::system_error& e) {
    std::fprintf(stderr, "ptprof: the system refused a resource: %s\n", e.what());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ptprof: %s\n", e.what());
  }
  return ptprof::cli::kExitBadInput;
}
