#pragma once
// LabChannel answers "what did the guest tell the host?": the lab's init script writes to its
// second serial port (captured by QEMU into a file) text lines "key value" and files framed as
// "file NAME SIZE\n" followed by SIZE raw bytes (the port is in raw mode): the kernel's release,
// the ftrace tracer that was set, /proc/kallsyms (gzip-compressed: a serial port is slow),
// /proc/modules, the workload's pid and name, and its exit status. See docs/lab.md.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "src/model/result.h"

namespace ptprof::record {

struct LabChannel {
  std::map<std::string, std::string> values;        // "uname" -> "6.1.0-56-cloud-amd64", ...
  std::map<std::string, std::vector<uint8_t>> files;  // "kallsyms" -> text (gunzipped)
  bool truncated = false;  // a file's bytes end early (the guest stopped writing)

  std::optional<std::string> Value(const std::string& key) const;
};

// Reads the channel's bytes; `name` (the capture file) is used in errors. A file named "X.gz" is
// stored as "X", decompressed. Fails only on a corrupt compressed file.
Result<LabChannel> ParseLabChannel(const std::vector<uint8_t>& bytes, const std::string& name);

// Decompresses gzip data; errors name `name`.
Result<std::vector<uint8_t>> Gunzip(const std::vector<uint8_t>& bytes, const std::string& name);

}  // namespace ptprof::record
