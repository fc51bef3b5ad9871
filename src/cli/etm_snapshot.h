#pragma once
// The CoreSight snapshot side of info, dump and decode: each command hands a snapshot directory
// (InputKind::kCoreSightSnapshot) to these functions, which decode it through decoders/etm.
#include <string>
#include <vector>

namespace ptprof::cli {

struct SnapshotCommandOptions {
  std::string dir;
  std::string format = "text";          // text | json (info), text | jsonl (dump, decode)
  std::vector<std::string> sources;     // --stream: trace source names (ETM_0, ...); empty: all
  bool insn = false;                    // decode: one record per instruction
  bool src_addr_n = false;              // decode: ETE/ETMv4 ranges split at N atoms
  bool verbose = false;                 // decode: say how the buffer was decoded (segments)
};

// `label`: the input as shown (the .ptar a snapshot was restored from); empty: options.dir.
int RunSnapshotInfo(const SnapshotCommandOptions& options, const std::string& label = "");
int RunSnapshotDump(const SnapshotCommandOptions& options);
int RunSnapshotDecode(const SnapshotCommandOptions& options);

}  // namespace ptprof::cli
