#pragma once
// LoadFakeAuxReplay answers "what does $PTPROF_FAKE_AUX replay?": the trace the fake AUX kernel
// (src/record/intel_pt/fake_aux_kernel.h) feeds into the AUX ring instead of trace hardware, from
// a .ptar (its first stream; the code is the recorded command's own) or a perf.data (its first
// AUX stream, with the recording's executable mappings, which the fake kernel reports as MMAP2s
// so that a stream recorded elsewhere decodes against its own binaries).
#include <string>
#include <vector>

#include "src/model/result.h"
#include "src/record/intel_pt/fake_aux_kernel.h"

namespace ptprof::cli {

struct FakeAuxReplay {
  std::vector<uint8_t> trace;
  std::vector<record::hw::FakeMapping> mappings;
};

// Errors name `path` and what is wrong with it.
Result<FakeAuxReplay> LoadFakeAuxReplay(const std::string& path);

}  // namespace ptprof::cli
