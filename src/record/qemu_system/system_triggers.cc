#include "src/record/qemu_system/system_triggers.h"

#include <fmt/format.h>

#include "sideband/elf_image.h"

namespace ptprof::record {

Status ResolveSystemAddressTriggers(const std::vector<KallsymsEntry>& kallsyms,
                                    const std::string& workload, triggers::TriggerEngine& engine) {
  const auto& specs = engine.policy().triggers;
  std::optional<ElfImage> image;  // loaded on first need
  for (size_t i = 0; i < specs.size(); ++i) {
    const triggers::TriggerSpec& t = specs[i];
    if (t.kind != triggers::TriggerKind::kAddress || t.address != 0) continue;
    uint64_t found = 0;
    for (const KallsymsEntry& entry : kallsyms)
      if (entry.name == t.symbol && entry.module.empty()) {
        found = entry.address;
        break;
      }
    if (found == 0 && !workload.empty()) {
      if (!image) {
        auto loaded = LoadElfImage(workload, 0);
        if (!loaded) return tl::unexpected(loaded.error());
        image = std::move(*loaded);
      }
      for (const Symbol& symbol : image->symbols)
        if (symbol.name == t.symbol) {
          found = symbol.address;
          break;
        }
    }
    if (found == 0)
      return Fail(fmt::format("--snapshot-on '{}': no symbol '{}' in the guest kernel's kallsyms "
                              "or in {} (use addr=0xADDR)",
                              t.text, t.symbol, workload.empty() ? "the workload" : workload));
    engine.ResolveAddress(i, found);
  }
  return {};
}

}  // namespace ptprof::record
