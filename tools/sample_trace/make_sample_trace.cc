// make_sample_trace: records a small program with the ptrace recorder and writes its PT trace and
// the list of executed instruction addresses (the independent expectation for decode tests).
//
//   make_sample_trace -o traces/sample/sample.pt --ips traces/sample/sample.ips [--psb-period N]
//                     -- traces/sample/sample
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "src/record/ptrace_recorder.h"

namespace {

int Usage() {
  std::fprintf(stderr,
               "usage: make_sample_trace -o TRACE.pt [--ips IPS.txt] [--psb-period BYTES] "
               "[--no-retcomp] -- PROGRAM [ARGS...]\n");
  return 2;
}

bool WriteFile(const std::string& path, const void* data, size_t size) {
  std::string tmp = path + ".tmp";
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) return false;
  bool ok = std::fwrite(data, 1, size, f) == size;
  ok = (std::fclose(f) == 0) && ok;
  return ok && std::rename(tmp.c_str(), path.c_str()) == 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string out_path, ips_path;
  ptprof::pt::EncoderOptions encoder;
  ptprof::record::StepperOptions stepper;
  stepper.quiet_child = true;
  int i = 1;
  for (; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--") {
      ++i;
      break;
    }
    if (arg == "-o" && i + 1 < argc) {
      out_path = argv[++i];
    } else if (arg == "--ips" && i + 1 < argc) {
      ips_path = argv[++i];
    } else if (arg == "--psb-period" && i + 1 < argc) {
      encoder.psb_period = std::strtoull(argv[++i], nullptr, 0);
    } else if (arg == "--no-retcomp") {
      encoder.return_compression = false;
    } else {
      return Usage();
    }
  }
  for (; i < argc; ++i) stepper.argv.push_back(argv[i]);
  if (out_path.empty() || stepper.argv.empty()) return Usage();

  auto recording = ptprof::record::RecordWithPtrace(stepper, encoder);
  if (!recording) {
    std::fprintf(stderr, "make_sample_trace: %s\n", recording.error().message.c_str());
    return 1;
  }
  if (!WriteFile(out_path, recording->trace.data(), recording->trace.size())) {
    std::fprintf(stderr, "make_sample_trace: %s: cannot write\n", out_path.c_str());
    return 1;
  }
  if (!ips_path.empty()) {
    std::string text;
    char line[24];
    for (uint64_t ip : recording->executed_ips) {
      std::snprintf(line, sizeof line, "%016llx\n", static_cast<unsigned long long>(ip));
      text += line;
    }
    if (!WriteFile(ips_path, text.data(), text.size())) {
      std::fprintf(stderr, "make_sample_trace: %s: cannot write\n", ips_path.c_str());
      return 1;
    }
  }
  const auto& s = recording->stats;
  std::fprintf(stderr,
               "make_sample_trace: %llu instructions, %zu bytes of PT (%llu packets, %llu PSBs, "
               "%llu TNT bits, %llu TIPs), exit status %d\n",
               static_cast<unsigned long long>(s.insns), recording->trace.size(),
               static_cast<unsigned long long>(s.packets), static_cast<unsigned long long>(s.psbs),
               static_cast<unsigned long long>(s.tnt_bits), static_cast<unsigned long long>(s.tips),
               recording->run.exit_status);
  return 0;
}
