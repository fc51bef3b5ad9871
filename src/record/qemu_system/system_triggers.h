#pragma once
// ResolveSystemAddressTriggers answers "which guest address does addr=SYMBOL mean in the kernel
// lab?": the kernel's symbols come from the guest's /proc/kallsyms (sent over the lab channel),
// the workload's from its static ELF file at its link-time addresses. The kernel is looked up
// first; errors name the symbol and where it was looked for.
#include <string>
#include <vector>

#include "sideband/kallsyms.h"
#include "src/model/result.h"
#include "src/record/triggers/trigger_engine.h"

namespace ptprof::record {

Status ResolveSystemAddressTriggers(const std::vector<KallsymsEntry>& kallsyms,
                                    const std::string& workload, triggers::TriggerEngine& engine);

}  // namespace ptprof::record
