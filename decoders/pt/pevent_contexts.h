#pragma once
// PeventContexts answers "which code does process PID see?" while perf sideband is replayed for
// ptxed: one libipt image per process (named "pid-<hex>", as libipt-sb names them), each starting
// as a copy of the kernel image (--pevent:kcore) and filled by mmap records. Images share the
// decoder's section cache so section ids stay readable. A process replaced by exec or a new fork
// gets a new context; the old one lives on while someone (the decoder) still uses it.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <intel-pt.h>

#include "sideband/image_set.h"
#include "src/model/result.h"

namespace ptprof::pt {

// The ABI of a process, learned from the first ELF it maps; it picks the vdso file.
enum class PeventAbi { kUnknown, kX64, kX32, kIa32 };

// The ABI of ELF file `path` (kUnknown when it is not a readable x86 ELF file).
PeventAbi ElfAbi(const std::string& path);

struct PeventContext {
  explicit PeventContext(uint32_t pid);
  ~PeventContext();
  PeventContext(const PeventContext&) = delete;
  PeventContext& operator=(const PeventContext&) = delete;

  uint32_t pid = 0;
  pt_image* image = nullptr;
  PeventAbi abi = PeventAbi::kUnknown;
};

class PeventContexts {
 public:
  explicit PeventContexts(pt_image_section_cache* iscache);
  ~PeventContexts();
  PeventContexts(const PeventContexts&) = delete;
  PeventContexts& operator=(const PeventContexts&) = delete;

  // Adds a section of the kernel (every context created afterwards sees it).
  Status AddKernelSection(const ImageSection& section);

  std::shared_ptr<PeventContext> Find(uint32_t pid) const;
  // The context of `pid`, created from the kernel image when there is none; null with `error`
  // set to libipt's code when the image cannot be copied.
  std::shared_ptr<PeventContext> Get(uint32_t pid, int& error);
  void Remove(uint32_t pid);

  // Maps `size` bytes of `file` from `offset` at `vaddr` into `context`; libipt's code (< 0) on
  // failure.
  int Map(PeventContext& context, const std::string& file, uint64_t offset, uint64_t size, uint64_t vaddr);

 private:
  pt_image_section_cache* iscache_;
  pt_image* kernel_;
  std::vector<std::shared_ptr<PeventContext>> contexts_;
};

}  // namespace ptprof::pt
