#pragma once
// AuxSpool answers "where does a whole run's trace wait until the recording is written?" for
// `record --full`: not in memory (a hardware trace runs at hundreds of MB/s) but in an unlinked
// temporary file under TMPDIR, appended to at every drain and mapped when the run ends. The file
// has no name once created, so nothing is left behind whatever happens to ptprof.
#include <cstdint>
#include <cstdio>
#include <span>
#include <string>

#include "sideband/shared_bytes.h"
#include "src/model/result.h"

namespace ptprof::record::hw {

class AuxSpool {
 public:
  static Result<AuxSpool> Create();
  AuxSpool(AuxSpool&& other) noexcept;
  AuxSpool& operator=(AuxSpool&& other) noexcept;
  AuxSpool(const AuxSpool&) = delete;
  AuxSpool& operator=(const AuxSpool&) = delete;
  ~AuxSpool();

  // Appends `bytes`; an error names the spool and says why (a full disk).
  Status Append(std::span<const uint8_t> bytes);
  uint64_t size() const { return size_; }
  // Everything appended, mapped; the spool is closed (its mapping keeps the data).
  Result<SharedBytes> Finish();

 private:
  AuxSpool() = default;
  FILE* file_ = nullptr;
  uint64_t size_ = 0;
};

}  // namespace ptprof::record::hw
