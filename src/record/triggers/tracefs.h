#pragma once
// Tracefs answers "where is tracefs, and what are a tracepoint's id and field offsets?" for the
// recorders that take syscall events from the raw_syscalls tracepoints. Finding tracefs mounts it
// at /sys/kernel/tracing when it is not mounted yet (needs CAP_SYS_ADMIN).
#include <cstdint>
#include <string>

#include "src/model/result.h"

namespace ptprof::record::triggers {

struct TracepointField {
  uint32_t offset = 0;
  uint32_t size = 0;
};

// The tracefs directory (with an events/ folder); mounts it if `mount_if_missing`.
Result<std::string> FindTracefs(bool mount_if_missing);
// events/SYSTEM/NAME/id.
Result<uint64_t> ReadTracepointId(const std::string& tracefs, const std::string& system,
                                  const std::string& name);
// Where field `field` sits in the tracepoint's raw record (events/SYSTEM/NAME/format).
Result<TracepointField> ReadTracepointField(const std::string& tracefs, const std::string& system,
                                            const std::string& name, const std::string& field);
// Same, from the text of a format file (for tests); `where` names it in errors.
Result<TracepointField> FindFieldInFormat(const std::string& format, const std::string& field,
                                          const std::string& where);

}  // namespace ptprof::record::triggers
