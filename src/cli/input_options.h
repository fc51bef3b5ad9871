#pragma once
// InputOptions are the command-line options every command that opens a trace shares: the input,
// the code images (--elf/--raw, in command-line order, a later one hiding what it overlaps), the
// PT parameters (--cpu, --mtc-freq, --nom-freq, --cpuid-0x15.eax/ebx), --addr-filter, the stream
// selection (--stream) and where a perf.data's binaries are (--symfs, --buildid-dir). Each
// command adds them to its CLI11 subcommand and turns them into the pipeline's RawInputOptions.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "src/pipeline/session.h"

namespace ptprof::cli {

struct InputOptions {
  std::vector<std::string> raw;
  std::vector<std::string> elf;
  std::vector<bool> image_order;  // true for --elf, in command-line order
  std::vector<std::string> addr_filters;
  std::string cpu;
  std::optional<uint64_t> mtc_freq;
  std::optional<uint64_t> nom_freq;
  std::optional<uint64_t> cpuid_0x15_eax;
  std::optional<uint64_t> cpuid_0x15_ebx;
  std::vector<std::string> streams;  // --stream: the trace streams to read (empty: all)
  std::string symfs;                 // perf.data: --symfs DIR
  std::string buildid_dir;           // perf.data: --buildid-dir DIR (default ~/.debug)
  std::string kallsyms;              // --kallsyms FILE: kernel symbols (a copy of /proc/kallsyms)
  std::string kcore;                 // perf.data: --kcore DIR (perf record --kcore's kcore_dir)
  CLI::Option* raw_option = nullptr;
  CLI::Option* elf_option = nullptr;

  // Whether any image or PT option was given (a .ptar carries its own and refuses them).
  bool AnyGiven() const;
  // After parsing: which of --elf and --raw came first, second, ... on the command line.
  void RecordImageOrder(const CLI::App& app);
  // The pipeline's description; a malformed value is an error naming its option (a usage error).
  Result<RawInputOptions> ToRawInput() const;
};

// --elf and --raw (each takes one value and repeats).
void AddImageOptions(CLI::App& app, InputOptions& options);
// --cpu, --mtc-freq, --nom-freq, --cpuid-0x15.eax and --cpuid-0x15.ebx.
void AddPtOptions(CLI::App& app, InputOptions& options);
// --addr-filter N:CFG:FROM-TO (repeatable), for commands that decode the flow; with it the
// options of AddFlowDecodeOptions.
void AddAddrFilterOption(CLI::App& app, InputOptions& options);
// --jobs N, --psb-segment BYTES (the parallel decode over PSB segments,
// decoders/pt/parallel_flow.h) and --engine fast|libipt: every command that decodes a PT flow.
void AddFlowDecodeOptions(CLI::App& app);
// --stream NAME (repeatable): which trace streams of a multi-stream input to read.
void AddStreamOption(CLI::App& app, InputOptions& options);
// --symfs DIR, --buildid-dir DIR: where a perf.data's binaries are; --kallsyms FILE, --kcore DIR:
// the kernel's symbols and code.
void AddBinarySearchOptions(CLI::App& app, InputOptions& options);

}  // namespace ptprof::cli
