#pragma once
// SnapshotMemory answers "which code bytes does a snapshot give the decoder?": the [dump] regions
// of every core traced into a buffer, read from their files with offset and length applied.
#include <vector>

#include "decoders/etm/etm_decoder.h"
#include "decoders/etm/snapshot.h"
#include "decoders/etm/source_config.h"

namespace ptprof::etm {

// The dumps of the cores of `plan`'s sources, each core once. A dump whose offset or length lies
// outside its file is an error naming the dump; a dump whose file is missing is a warning.
Result<std::vector<MemoryImage>> LoadSnapshotMemory(const Snapshot& snapshot, const BufferPlan& plan,
                                                    std::vector<std::string>& warnings);

}  // namespace ptprof::etm
