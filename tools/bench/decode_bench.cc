// decode_bench: decode throughput of ptprof beside libipt driven directly, on the same input in the
// same run. Prints MB/s and M insn/s per mode and each mode's ratio to libipt's block decoder.
//
//   decode_bench [--repeat N] [--cpu F/M[/S]] TRACE --elf FILE[:BASE] | --raw FILE:ADDR ...
#include <chrono>
#include <cstdio>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "decoders/pt/flow_session.h"
#include "decoders/pt/libipt_reference.h"
#include "decoders/pt/ptdump_writer.h"
#include "sideband/file_bytes.h"
#include "sideband/image_set.h"
#include "src/report/event_writer.h"

namespace {

using namespace ptprof;

// Counts what the model stream carries; the cheapest possible consumer.
class CountingSink : public EventSink {
 public:
  void OnEvent(const TraceEvent& event) override {
    if (const auto* b = std::get_if<ExecBlock>(&event.body)) insns += b->insns;
    else if (std::holds_alternative<Instruction>(event.body)) ++insns;
  }
  uint64_t insns = 0;
};

struct Measurement {
  std::string name;
  double seconds = 0;
  uint64_t insns = 0;
};

// The best of `repeat` runs: the least disturbed by the rest of the machine.
Measurement Measure(const std::string& name, int repeat, const std::function<uint64_t()>& run) {
  Measurement m{name, 1e30, 0};
  for (int i = 0; i < repeat; ++i) {
    auto start = std::chrono::steady_clock::now();
    m.insns = run();
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (s < m.seconds) m.seconds = s;
  }
  return m;
}

int Usage() {
  std::fprintf(stderr, "usage: decode_bench [--repeat N] [--cpu F/M[/S]] TRACE (--elf FILE[:BASE] | --raw SPEC)...\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  int repeat = 5;
  std::string trace_path;
  pt::PtParams params;
  ImageSet images;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&]() -> std::string { return i + 1 < argc ? argv[++i] : std::string(); };
    if (arg == "--repeat") {
      repeat = std::max(1, std::atoi(value().c_str()));
    } else if (arg == "--cpu") {
      if (auto s = pt::ParseCpu(value(), "--cpu", params); !s) {
        std::fprintf(stderr, "decode_bench: %s\n", s.error().message.c_str());
        return 2;
      }
    } else if (arg == "--elf" || arg == "--raw") {
      std::string spec = value();
      Status s = arg == "--elf" ? [&]() -> Status {
        auto e = ParseElfImageSpec(spec);
        if (!e) return tl::unexpected(e.error());
        return images.AddElf(*e);
      }() : [&]() -> Status {
        auto r = ParseRawImageSpec(spec);
        if (!r) return tl::unexpected(r.error());
        return images.AddRaw(*r);
      }();
      if (!s) {
        std::fprintf(stderr, "decode_bench: %s\n", s.error().message.c_str());
        return 1;
      }
    } else if (trace_path.empty() && !arg.empty() && arg[0] != '-') {
      trace_path = arg;
    } else {
      return Usage();
    }
  }
  if (trace_path.empty()) return Usage();
  auto trace = ReadFileBytes(trace_path);
  if (!trace) {
    std::fprintf(stderr, "decode_bench: %s\n", trace->empty() ? "empty trace" : trace.error().message.c_str());
    return 1;
  }

  std::vector<Measurement> results;
  auto reference = [&](bool insn) {
    return [&, insn]() -> uint64_t {
      auto count = pt::RunLibiptDirectly(*trace, images, params, insn);
      return count ? count->insns : 0;
    };
  };
  auto ptprof_flow = [&](bool insn, bool jsonl, pt::FlowEngine engine = pt::FlowEngine::kFast) {
    return [&, insn, jsonl, engine]() -> uint64_t {
      pt::FlowRequest request;
      request.params = params;
      request.insns = insn;
      request.engine = engine;
      if (!jsonl) {
        CountingSink sink;
        auto summary = pt::DecodeFlow(*trace, images, request, sink);
        return summary ? sink.insns : 0;
      }
      std::FILE* null_out = std::fopen("/dev/null", "w");
      EventWriterOptions options;
      options.format = EventFormat::kJsonl;
      EventWriter writer(null_out, options);
      auto summary = pt::DecodeFlow(*trace, images, request, writer);
      std::fclose(null_out);
      return summary ? summary->insns : 0;
    };
  };
  results.push_back(Measure("libipt block decoder (reference)", repeat, reference(false)));
  // The fast engine (the default) and, for comparison, ptprof over libipt's decoders
  // (--engine libipt): for instructions, libipt's instruction decoder against the fast engine's
  // blocks expanded.
  constexpr pt::FlowEngine kLibiptEngine = pt::FlowEngine::kLibipt;
  results.push_back(Measure("ptprof blocks -> model", repeat, ptprof_flow(false, false)));
  results.push_back(Measure("ptprof blocks -> model, libipt", repeat,
                            ptprof_flow(false, false, kLibiptEngine)));
  results.push_back(Measure("ptprof blocks -> JSONL", repeat, ptprof_flow(false, true)));
  results.push_back(Measure("libipt insn decoder", repeat, reference(true)));
  results.push_back(Measure("ptprof insns -> model", repeat, ptprof_flow(true, false)));
  results.push_back(Measure("ptprof insns -> model, libipt", repeat,
                            ptprof_flow(true, false, kLibiptEngine)));
  results.push_back(Measure("ptprof insns -> JSONL", repeat, ptprof_flow(true, true)));
  results.push_back(Measure("ptprof insns -> JSONL, libipt", repeat,
                            ptprof_flow(true, true, kLibiptEngine)));
  results.push_back(Measure("ptprof packets (ptdump listing)", repeat, [&]() -> uint64_t {
    pt::PtdumpOptions options;
    size_t lines = 0;
    pt::PtdumpWriter writer(params, options, [&](std::string_view) { ++lines; });
    writer.Dump(std::span<const uint8_t>(trace->data(), trace->size()));
    return 0;
  }));

  double mb = static_cast<double>(trace->size()) / 1e6;
  const Measurement& ref = results.front();
  std::printf("input: %s, %zu bytes, %llu instructions (libipt), best of %d runs\n\n",
              trace_path.c_str(), trace->size(), static_cast<unsigned long long>(ref.insns), repeat);
  std::printf("%-34s %10s %9s %11s %12s\n", "mode", "time ms", "MB/s", "M insn/s", "vs reference");
  for (const auto& m : results) {
    std::printf("%-34s %10.2f %9.1f %11s %11.2fx\n", m.name.c_str(), m.seconds * 1e3, mb / m.seconds,
                m.insns ? std::to_string(static_cast<int>(static_cast<double>(m.insns) / 1e6 / m.seconds)).c_str() : "-",
                ref.seconds / m.seconds);
    if (m.insns && m.insns != ref.insns)
      std::printf("  warning: %s decoded %llu instructions, the reference %llu\n", m.name.c_str(),
                  static_cast<unsigned long long>(m.insns), static_cast<unsigned long long>(ref.insns));
  }
  std::printf("\nratio = reference time / mode time: above 1 is faster than libipt's block decoder.\n");
  return 0;
}
