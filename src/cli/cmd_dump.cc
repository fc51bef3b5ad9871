// ptprof dump: the Intel PT packets of a raw trace, as text or JSON Lines. The ptdump-compatible
// format (`--format ptdump`) has its own front end in ptdump_compat.cc.
#include <algorithm>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "decoders/pt/packet_listing.h"
#include "decoders/pt/pt_params.h"
#include "sideband/file_bytes.h"
#include "src/cli/command.h"
#include "src/cli/input_options.h"
#include "src/pipeline/input_kind.h"
#include "src/pipeline/session.h"

namespace ptprof::cli {

namespace {

struct DumpOptions {
  std::string input;
  std::string format = "text";
  InputOptions in;  // the PT parameters only: packets need no images
};

int UsageError(const std::string& message) {
  std::fprintf(stderr, "ptprof: dump: %s\n", message.c_str());
  return kExitUsage;
}

int RunDump(const DumpOptions& options) {
  auto raw = options.in.ToRawInput();
  if (!raw) return UsageError(raw.error().message);
  const auto format = options.format == "jsonl" ? pt::ListingFormat::kJsonl
                                                : pt::ListingFormat::kText;
  auto session = OpenSession(options.input, *raw, options.in.AnyGiven());
  if (!session) return ReportBadInput(session.error().message);
  if (session->stream_bytes.size() != 1)
    return ReportBadInput(options.input + ": the input holds " +
                          std::to_string(session->stream_bytes.size()) +
                          " trace streams; dump reads inputs of one stream for now");
  const pt::PtParams& params = session->params();
  const std::vector<uint8_t>* bytes = &session->stream_bytes[0];

  std::string pending;
  auto flush = [&pending] {
    std::fwrite(pending.data(), 1, pending.size(), stdout);
    pending.clear();
  };
  pt::PacketListing listing(params, format, [&](std::string_view text) {
    pending += text;
    if (pending.size() >= (1u << 16)) flush();
  });
  auto summary = listing.List(*bytes);
  flush();
  std::fflush(stdout);
  if (!summary) return ReportBadInput(options.input + ": " + summary.error().message);
  const uint64_t errors = summary->gaps - (summary->truncated ? 1 : 0);
  if (errors != 0)
    std::fprintf(stderr,
                 "ptprof: warning: %s: %llu decode error(s); %llu byte(s) skipped to resynchronise\n",
                 options.input.c_str(), static_cast<unsigned long long>(errors),
                 static_cast<unsigned long long>(summary->skipped_bytes));
  if (summary->truncated)
    std::fprintf(stderr, "ptprof: warning: %s: offset %#llx: the trace ends inside a packet\n",
                 options.input.c_str(), static_cast<unsigned long long>(summary->truncated_at));
  return kExitOk;
}

}  // namespace

Command AddDumpCommand(CLI::App& parent) {
  auto options = std::make_shared<DumpOptions>();
  CLI::App* app = parent.add_subcommand(
      "dump", "List the Intel PT packets of a raw trace (see docs/dump.md)");
  app->add_option("input", options->input, "raw Intel PT trace file")->required();
  app->add_option("--format", options->format,
                  "text (default), jsonl, or ptdump (libipt 2.0.5 ptdump's exact listing; takes "
                  "ptdump's options, see 'ptprof dump --format ptdump --help')")
      ->check(CLI::IsMember({"text", "jsonl"}));
  AddPtOptions(*app, options->in);
  return {app, [options] { return RunDump(*options); }};
}

}  // namespace ptprof::cli
