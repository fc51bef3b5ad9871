#pragma once
// The lines `ptprof decode --branches` writes for branch samples (decoders/lbr/branch_record.h),
// whatever they came from (LBR samples, software branch tracer bursts, a flow's pseudo-samples).
// Text: a header line per sample, then a line per record. JSON Lines: a line per record, which
// names its sample.
#include <cstdint>
#include <functional>
#include <string>

#include "decoders/lbr/branch_record.h"

namespace ptprof {

// What a sample's header line says.
struct BranchSampleHead {
  uint64_t sample = 0;
  uint32_t pid = 0;
  uint32_t tid = 0;
  int32_t cpu = -1;           // -1: not shown
  uint64_t time_ns = 0;       // 0: not shown
  uint64_t trace_offset = 0;
  uint64_t records = 0;
};

// "sample N: pid P tid T[ cpu C][ time NS] offset 0x..., K records\n".
void AppendSampleHeader(std::string& out, const BranchSampleHead& head);

// "  0x4e8e -> 0x4e80[  main+0x1e -> main+0x10][  pred|mispred][  cycles 3]\n": the symbols when
// `symbolize` names either end ("?" for the other).
void AppendRecordText(std::string& out, const BranchRecord& record,
                      const std::function<std::string(uint64_t)>& symbolize);

// A record's JSON line in two pieces around its sample number, which a writer may learn only
// after the record: `{"from":"0x...","to":"0x...","sample":`, then `N[,"cycles":C][,"mispred":B]}`
// and the newline.
void AppendRecordJsonHead(std::string& out, const BranchRecord& record);
void AppendRecordJsonTail(std::string& out, uint64_t sample, const BranchRecord& record);

}  // namespace ptprof
