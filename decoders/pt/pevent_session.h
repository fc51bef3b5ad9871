#pragma once
// PeventSession answers "what does the perf sideband say happens at this point of the decode?"
// for ptxed: at each decoder event it shows (--sb:*) and applies the sideband records that are
// due by then, in time order across files (mmaps fill process images, fork copies one, exec
// replaces one, itrace-start and context switches pick the process to decode), reports losses
// and unusable mappings as ptxed does ("[file:offset sideband warning: ...]"), and tells which
// image the decoder should read from now on. Context switches wait for a point where the trace
// is likely in the kernel (or its location is unknown), as libipt-sb does, because the sideband
// time is not precise enough to place them exactly.
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include <intel-pt.h>

#include "decoders/pt/pevent_contexts.h"
#include "decoders/pt/pevent_options.h"
#include "decoders/pt/pevent_queue.h"

namespace ptprof::pt {

// Sideband warnings (libipt-sb's pt_sb_error_code) and their text.
enum class PeventWarning { kLost = 1, kTraceLost = 2, kSectionLost = 3 };

class PeventSession {
 public:
  using Emit = std::function<void(std::string_view)>;

  // `iscache` is the decoder's section cache; `emit` receives whole output lines.
  PeventSession(PeventQueue queue, const SidebandRequest& request, pt_image_section_cache* iscache, Emit emit);

  PeventContexts& contexts() { return contexts_; }

  // Shows and applies what is due at `event` (libipt-sb's pt_sb_event). Returns the image to
  // decode from from now on, or null to keep the current one.
  pt_image* OnEvent(const pt_event& event);

 private:
  // Where the trace is, as far as the events tell (for placing postponed context switches).
  enum class Location { kUnknown, kLikelyUser, kUser, kLikelyKernel, kKernel };

  // Per-file replay state.
  struct Replay {
    std::shared_ptr<PeventContext> context;       // the process being decoded
    std::shared_ptr<PeventContext> next_context;  // a switch waiting for a good place
    Location location = Location::kUnknown;
  };

  void ApplyRecord(PeventSource& source, Replay& replay, pt_image** image);
  // The postponed-switch half of libipt's apply; false when a finished file has nothing left to do.
  bool Present(PeventSource& source, Replay& replay, const pt_event& event, pt_image** image);
  void PrepareSwitch(Replay& replay, uint32_t pid, const PeventSource& source);
  void PrepareSwitch(Replay& replay, std::shared_ptr<PeventContext> context);
  void SwitchNow(Replay& replay, pt_image** image);
  void Map(const PeventSource& source, uint32_t pid, const std::string& filename, uint64_t offset, uint64_t size,
           uint64_t vaddr);
  void Fork(const PeventSource& source, uint32_t pid, uint32_t ppid, uint32_t tid);
  Location LocationOf(const pt_event& event, Location previous, uint64_t kernel_start) const;
  // Reports a warning (printed with --sb:warn) or a libipt error code (always printed) at the
  // current record of `source`.
  void Report(const PeventSource& source, int code);

  PeventQueue queue_;
  SidebandPrintFlags print_;
  bool warn_ = false;
  bool print_switch_ = false;
  PeventContexts contexts_;
  Emit emit_;
  std::map<const PeventSource*, Replay> replays_;
};

}  // namespace ptprof::pt
