#pragma once
// Each subcommand lives in its own file: it adds its CLI11 subcommand with its own options struct
// (no globals) and returns the function that runs it. Run functions return the process exit
// status: 0 success, 1 bad input (one line on stderr says what and where), 2 usage error.
// main() turns what the system refuses (memory, a thread) into one line and status 1 as well.
#include <functional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace ptprof::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitBadInput = 1;
inline constexpr int kExitUsage = 2;

struct Command {
  CLI::App* app = nullptr;
  std::function<int()> run;
};

Command AddInfoCommand(CLI::App& parent);
Command AddDumpCommand(CLI::App& parent);
Command AddDecodeCommand(CLI::App& parent);
Command AddArchiveCommand(CLI::App& parent);
Command AddRecordCommand(CLI::App& parent);
Command AddExportCommand(CLI::App& parent);
Command AddDeltaCommand(CLI::App& parent);
Command AddSyscallsCommand(CLI::App& parent);
Command AddImpactCommand(CLI::App& parent);
Command AddStacksCommand(CLI::App& parent);
Command AddValidateCommand(CLI::App& parent);
Command AddSweepCommand(CLI::App& parent);

// Compatibility front ends that take libipt's own option spellings (which CLI11 cannot name, e.g.
// "--block:show-blocks"): `ptprof dump --format ptdump ...` and `ptprof decode --format ptxed ...`.
// `args` are the arguments after the subcommand name, with "--format X" removed.
int RunPtdumpCompat(const std::vector<std::string>& args);
int RunPtxedCompat(const std::vector<std::string>& args);

// Prints "ptprof: <message>" on stderr and returns kExitBadInput.
int ReportBadInput(const std::string& message);

}  // namespace ptprof::cli
