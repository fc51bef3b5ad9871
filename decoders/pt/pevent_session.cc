#include "decoders/pt/pevent_session.h"

#include <fmt/format.h>

#include "decoders/pt/pevent_record_text.h"
#include "sideband/perf/perf_abi.h"

namespace ptprof::pt {

namespace {

constexpr uint16_t kCpumodeKernel = 1;  // PERF_RECORD_MISC_KERNEL

const char* WarningText(int code) {
  switch (static_cast<PeventWarning>(code)) {
    case PeventWarning::kLost: return "sideband lost";
    case PeventWarning::kTraceLost: return "trace lost";
    case PeventWarning::kSectionLost: return "image section lost";
  }
  return "bad errcode";
}

}  // namespace

PeventSession::PeventSession(PeventQueue queue, const SidebandRequest& request, pt_image_section_cache* iscache,
                             Emit emit)
    : queue_(std::move(queue)),
      print_(request.print),
      warn_(request.warn),
      print_switch_(request.print_switch),
      contexts_(iscache),
      emit_(std::move(emit)) {}

void PeventSession::Report(const PeventSource& source, int code) {
  if (code >= 0 && !warn_) return;
  const char* text = code < 0 ? pt_errstr(pt_errcode(code)) : WarningText(code);
  emit_(fmt::format("[{}:{:016x} sideband {}: {}]\n", source.filename(), source.current().offset,
                    code < 0 ? "error" : "warning", text));
}

void PeventSession::PrepareSwitch(Replay& replay, std::shared_ptr<PeventContext> context) {
  // A switch to the one already pending, or back to the current process, changes nothing; any
  // other switch replaces the pending one (timing is imprecise, switches may be skipped).
  if (replay.next_context == context) return;
  replay.next_context.reset();
  if (replay.context == context) return;
  replay.next_context = std::move(context);
}

void PeventSession::PrepareSwitch(Replay& replay, uint32_t pid, const PeventSource& source) {
  int error = 0;
  auto context = contexts_.Get(pid, error);
  if (!context) return Report(source, error);
  PrepareSwitch(replay, std::move(context));
}

void PeventSession::SwitchNow(Replay& replay, pt_image** image) {
  if (print_switch_) {
    const char* name = pt_image_name(replay.next_context->image);
    emit_(fmt::format("[context: {}]\n", name ? name : "<unknown>"));
  }
  *image = replay.next_context->image;
  replay.context = std::move(replay.next_context);
}

void PeventSession::Map(const PeventSource& source, uint32_t pid, const std::string& filename, uint64_t offset,
                        uint64_t size, uint64_t vaddr) {
  int error = 0;
  auto context = contexts_.Get(pid, error);
  if (!context) return Report(source, error);
  const PeventConfig& config = source.config();
  std::string path = filename;
  if (!filename.empty() && filename[0] == '[') {
    // Of the kernel's pseudo files only [vdso] has code we can get: from the user, per ABI.
    if (filename != "[vdso]") return Report(source, static_cast<int>(PeventWarning::kSectionLost));
    switch (context->abi) {
      case PeventAbi::kX64: path = config.vdso_x64; break;
      case PeventAbi::kX32: path = config.vdso_x32; break;
      case PeventAbi::kIa32: path = config.vdso_ia32; break;
      case PeventAbi::kUnknown: path.clear(); break;
    }
    if (path.empty()) return Report(source, -pte_bad_config);
  } else if (filename == "//anon" || filename.find(" (deleted)") != std::string::npos) {
    // JIT code and deleted files: their code is gone.
    return Report(source, static_cast<int>(PeventWarning::kSectionLost));
  } else if (!config.sysroot.empty()) {
    path = config.sysroot + filename;
  }
  if (context->abi == PeventAbi::kUnknown) context->abi = ElfAbi(path);
  const int status = contexts_.Map(*context, path, offset, size, vaddr);
  if (status < 0) Report(source, status);
}

void PeventSession::Fork(const PeventSource& source, uint32_t pid, uint32_t ppid, uint32_t tid) {
  if (pid == ppid) return;  // a new thread: its process has its context already
  if (pid != tid) return Report(source, -pte_internal);
  // The child's old context (a reused pid) is gone; exit records come too early to drop it.
  contexts_.Remove(pid);
  int error = 0;
  auto child = contexts_.Get(pid, error);
  if (!child) return Report(source, error);
  auto parent = contexts_.Find(ppid);
  if (!parent) return;
  const int status = pt_image_copy(child->image, parent->image);
  if (status < 0) Report(source, status);
}

void PeventSession::ApplyRecord(PeventSource& source, Replay& replay, pt_image** image) {
  const PeventEntry& entry = source.current();
  const perf::PerfRecord& r = entry.record;
  const uint16_t misc = r.header.misc;
  switch (r.header.type) {
    case perf::kRecordItraceStart: {
      if (!image) break;  // only the primary file starts the trace
      PrepareSwitch(replay, std::get<perf::ItraceStartRecord>(r.body).pid, source);
      // Tracing just started: no need to wait for a good place.
      if (replay.next_context) SwitchNow(replay, image);
      break;
    }
    case perf::kRecordFork: {
      const auto& t = std::get<perf::TaskRecord>(r.body);
      Fork(source, t.pid, t.ppid, t.tid);
      break;
    }
    case perf::kRecordComm: {
      const auto& c = std::get<perf::CommRecord>(r.body);
      if (!c.exec) break;
      // exec: a new context with a fresh image (the old one may still be decoded from until the
      // trace reaches the kernel); mmap records that follow fill it.
      contexts_.Remove(c.pid);
      int error = 0;
      auto context = contexts_.Get(c.pid, error);
      if (!context) return Report(source, error);
      if (image) PrepareSwitch(replay, std::move(context));
      break;
    }
    case perf::kRecordSwitch: {
      if (!image || (misc & perf::kMiscSwitchOut)) break;  // act on switch-in only
      if (!r.sample_id.pid) return Report(source, -pte_bad_config);
      PrepareSwitch(replay, *r.sample_id.pid, source);
      break;
    }
    case perf::kRecordSwitchCpuWide: {
      if (!image) break;
      if (misc & perf::kMiscSwitchOut) {
        PrepareSwitch(replay, std::get<perf::SwitchRecord>(r.body).next_prev_pid, source);
      } else if (r.sample_id.pid) {
        PrepareSwitch(replay, *r.sample_id.pid, source);
      }
      break;
    }
    case perf::kRecordMmap:
    case perf::kRecordMmap2: {
      // Kernel code comes from kcore: the files on disk differ from what runs.
      if ((misc & perf::kMiscCpumodeMask) == kCpumodeKernel) break;
      const auto& m = std::get<perf::MmapRecord>(r.body);
      Map(source, m.pid, m.filename, m.pgoff, m.len, m.addr);
      break;
    }
    case perf::kRecordLost: Report(source, static_cast<int>(PeventWarning::kLost)); break;
    case perf::kRecordAux: {
      if (!image) break;
      if (std::get<perf::AuxRecord>(r.body).flags & perf::kAuxFlagTruncated)
        Report(source, static_cast<int>(PeventWarning::kTraceLost));
      break;
    }
    default: break;
  }
}

PeventSession::Location PeventSession::LocationOf(const pt_event& event, Location previous,
                                                  uint64_t kernel_start) const {
  auto at = [kernel_start](uint64_t ip) { return ip < kernel_start ? Location::kUser : Location::kKernel; };
  // Tracing stopped at an unknown IP: it likely went to the other side.
  auto across = [](Location from) {
    switch (from) {
      case Location::kLikelyKernel:
      case Location::kKernel: return Location::kLikelyUser;
      case Location::kLikelyUser:
      case Location::kUser: return Location::kLikelyKernel;
      default: return Location::kUnknown;
    }
  };
  const bool suppressed = event.ip_suppressed;
  switch (event.type) {
    case ptev_enabled: return at(event.variant.enabled.ip);
    case ptev_disabled: return suppressed ? across(previous) : at(event.variant.disabled.ip);
    case ptev_async_disabled:
      return suppressed ? across(at(event.variant.async_disabled.at)) : at(event.variant.async_disabled.ip);
    case ptev_async_branch: return at(event.variant.async_branch.to);
    case ptev_async_paging:
      if (!suppressed) return at(event.variant.async_paging.ip);
      return Location::kLikelyKernel;
    case ptev_paging: return Location::kLikelyKernel;
    case ptev_overflow: return suppressed ? Location::kUnknown : at(event.variant.overflow.ip);
    case ptev_exec_mode: return suppressed ? Location::kUnknown : at(event.variant.exec_mode.ip);
    case ptev_tsx: return suppressed ? Location::kUnknown : at(event.variant.tsx.ip);
    case ptev_exstop: return suppressed ? Location::kUnknown : at(event.variant.exstop.ip);
    case ptev_mwait: return suppressed ? Location::kUnknown : at(event.variant.mwait.ip);
    case ptev_ptwrite: return suppressed ? Location::kUnknown : at(event.variant.ptwrite.ip);
    case ptev_tick: return suppressed ? Location::kUnknown : at(event.variant.tick.ip);
    default: return Location::kUnknown;
  }
}

bool PeventSession::Present(PeventSource& source, Replay& replay, const pt_event& event, pt_image** image) {
  const Location old = replay.location;
  replay.location = LocationOf(event, old, source.config().kernel_start);
  if (!replay.next_context) return !source.done();
  auto kernel_or_unknown = [](Location l) {
    return l == Location::kLikelyKernel || l == Location::kKernel || l == Location::kUnknown;
  };
  // Switch inside the kernel; an unknown location also catches the window before tracing is
  // enabled again (or at the start of the trace).
  if (kernel_or_unknown(old) || kernel_or_unknown(replay.location)) SwitchNow(replay, image);
  return true;
}

pt_image* PeventSession::OnEvent(const pt_event& event) {
  pt_image* image = nullptr;
  // Round one: show and apply every record due by the event's time, in time order.
  while (PeventSource* source = queue_.PopDue(event.tsc)) {
    const std::string text =
        PeventRecordText(source->current(), source->filename(), source->config().sample_type, print_);
    if (!text.empty()) emit_(text);
    ApplyRecord(*source, replays_[source], source->primary() ? &image : nullptr);
    source->Advance();
    queue_.Requeue(source);
  }
  // Round two: every file sees the event, to place the context switches it postponed.
  for (PeventSource* source : queue_.pending())
    Present(*source, replays_[source], event, source->primary() ? &image : nullptr);
  for (PeventSource* source : std::vector<PeventSource*>(queue_.finished()))
    if (!Present(*source, replays_[source], event, source->primary() ? &image : nullptr)) queue_.Retire(source);
  return image;
}

}  // namespace ptprof::pt
