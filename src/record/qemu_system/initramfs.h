#pragma once
// The lab's guest root file system. CpioArchive answers "what bytes does the kernel unpack as its
// initramfs?" (the "newc" cpio format the kernel reads, uncompressed); LabInitScript answers "what
// does the guest do?": mount proc/sys/devtmpfs/tracefs, send kallsyms and modules to the host on
// the second serial port, set the ftrace tracer, run the workload (its pid and exit status go to
// the host too) and power off. See docs/lab.md.
#include <cstdint>
#include <string>
#include <vector>

#include "src/model/result.h"

namespace ptprof::record {

class CpioArchive {
 public:
  void AddDirectory(const std::string& path);
  void AddFile(const std::string& path, const std::vector<uint8_t>& bytes, uint32_t mode = 0755);
  void AddSymlink(const std::string& path, const std::string& target);
  // The archive with its trailer.
  std::vector<uint8_t> Finish() const;

 private:
  void Add(const std::string& path, uint32_t mode, const std::vector<uint8_t>& data);
  std::vector<uint8_t> bytes_;
  uint32_t next_inode_ = 1;
};

struct LabGuest {
  std::string tracer = "nop";               // ftrace: nop, function, function_graph
  std::string workload_name;                // the file name inside the guest (/work/NAME)
  std::vector<std::string> args;            // the workload's arguments
};

std::string LabInitScript(const LabGuest& guest);

// The initramfs: busybox (a static build) as /bin/busybox, the init script as /init, the workload
// as /work/NAME. Fails naming a file that cannot be read.
Result<std::vector<uint8_t>> BuildLabInitramfs(const std::string& busybox,
                                               const std::string& workload, const LabGuest& guest);

}  // namespace ptprof::record
