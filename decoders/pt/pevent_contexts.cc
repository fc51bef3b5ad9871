#include "decoders/pt/pevent_contexts.h"

#include <algorithm>
#include <cstdio>
#include <fstream>

#include <fmt/format.h>

namespace ptprof::pt {

PeventAbi ElfAbi(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  unsigned char header[20] = {};
  if (!in.read(reinterpret_cast<char*>(header), sizeof header)) return PeventAbi::kUnknown;
  if (header[0] != 0x7f || header[1] != 'E' || header[2] != 'L' || header[3] != 'F') return PeventAbi::kUnknown;
  if (header[6] != 1) return PeventAbi::kUnknown;  // EI_VERSION: EV_CURRENT
  if (header[4] == 2) return PeventAbi::kX64;      // ELFCLASS64
  if (header[4] != 1) return PeventAbi::kUnknown;  // ELFCLASS32: the machine tells ia32 from x32
  const unsigned machine = header[18] | (header[19] << 8);
  if (machine == 3) return PeventAbi::kIa32;   // EM_386
  if (machine == 62) return PeventAbi::kX32;   // EM_X86_64
  return PeventAbi::kUnknown;
}

PeventContext::PeventContext(uint32_t pid_) : pid(pid_) {
  const std::string name = fmt::format("pid-{:x}", pid);
  image = pt_image_alloc(name.c_str());
}

PeventContext::~PeventContext() { pt_image_free(image); }

PeventContexts::PeventContexts(pt_image_section_cache* iscache)
    : iscache_(iscache), kernel_(pt_image_alloc("kernel")) {}

PeventContexts::~PeventContexts() {
  contexts_.clear();
  pt_image_free(kernel_);
}

Status PeventContexts::AddKernelSection(const ImageSection& section) {
  int isid = pt_iscache_add_file(iscache_, section.file.c_str(), section.file_offset, section.size,
                                 section.address);
  int status = isid < 0 ? isid : pt_image_add_cached(kernel_, iscache_, isid, nullptr);
  if (status < 0)
    return Fail(fmt::format("{}: cannot map at {:#x}: {}", section.file, section.address,
                            pt_errstr(pt_errcode(status))));
  return {};
}

std::shared_ptr<PeventContext> PeventContexts::Find(uint32_t pid) const {
  for (const auto& context : contexts_)
    if (context->pid == pid) return context;
  return nullptr;
}

std::shared_ptr<PeventContext> PeventContexts::Get(uint32_t pid, int& error) {
  if (auto context = Find(pid)) return context;
  auto context = std::make_shared<PeventContext>(pid);
  error = context->image ? pt_image_copy(context->image, kernel_) : -pte_nomem;
  if (error < 0) return nullptr;
  error = 0;
  contexts_.push_back(context);
  return context;
}

void PeventContexts::Remove(uint32_t pid) {
  contexts_.erase(std::remove_if(contexts_.begin(), contexts_.end(),
                                 [pid](const auto& context) { return context->pid == pid; }),
                  contexts_.end());
}

int PeventContexts::Map(PeventContext& context, const std::string& file, uint64_t offset, uint64_t size,
                        uint64_t vaddr) {
  int isid = pt_iscache_add_file(iscache_, file.c_str(), offset, size, vaddr);
  if (isid < 0) return isid;
  return pt_image_add_cached(context.image, iscache_, isid, nullptr);
}

}  // namespace ptprof::pt
