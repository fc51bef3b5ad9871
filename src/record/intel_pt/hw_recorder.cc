#include "src/record/intel_pt/hw_recorder.h"

#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <deque>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "src/record/intel_pt/aux_spool.h"
#include "src/record/triggers/live_triggers.h"
#include "src/record/triggers/syscall_tracepoints.h"
#include "src/record/triggers/traced_launch.h"

namespace ptprof::record::hw {

namespace {

std::string ReadMaps(pid_t pid) {
  std::ifstream in(fmt::format("/proc/{}/maps", pid));
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

uint32_t PagesFor(uint64_t bytes) {
  const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  uint64_t pages = 1;
  while (pages * page < bytes) pages <<= 1;
  return static_cast<uint32_t>(pages);
}

// Cuts one snapshot of every event for `decision`.
Status Cut(AuxSession& session, const triggers::SnapshotDecision& decision, uint64_t want,
           uint64_t align, HwRecording& out) {
  for (size_t i = 0; i < session.events(); ++i) {
    auto bytes = session.Snapshot(i, want, align);
    if (!bytes) return tl::unexpected(bytes.error());
    HwSnapshot snapshot;
    snapshot.label = decision.label;
    snapshot.tid = decision.tid;
    snapshot.time_ns = decision.time_ns;
    snapshot.latency_ns = decision.latency_ns;
    snapshot.sequence = decision.sequence;
    snapshot.cpu = session.cpu(i);
    snapshot.bytes = SharedBytes(std::move(*bytes));
    out.snapshots.push_back(std::move(snapshot));
    session.DrainSideband(i, out.sideband);
  }
  return {};
}

}  // namespace

Result<HwRecording> RecordHardware(const HwRecordRequest& request) {
  namespace tr = triggers;
  PerfKernel& kernel = request.kernel ? *request.kernel : RealPerfKernel();
  auto child = tr::LaunchStoppedAtExec(tr::LaunchSpec{request.argv, {}});
  if (!child) return tl::unexpected(child.error());
  const pid_t pid = *child;
  auto abandon = [&](const Error& error) -> Result<HwRecording> {
    kill(pid, SIGKILL);
    tr::ResumeLaunched(pid);
    waitpid(pid, nullptr, 0);
    return tl::unexpected(error);
  };
  HwRecording out;
  out.pid = pid;
  out.full = request.full;
  out.cpu = ReadCpuIdentity();
  out.maps.push_back(ReadMaps(pid));
  tr::TriggerEngine engine(request.policy);
  if (auto st = tr::ResolveAddressTriggers(pid, engine); !st) return abandon(st.error());

  AuxSession::Options options;
  options.aux_pages = PagesFor(request.aux_bytes);
  options.snapshot = !request.full;
  HwAttr attr = request.attr;
  attr.attr.inherit = request.per_cpu ? 1 : 0;
  attr.attr.disabled = 1;
  const std::vector<int> cpus = request.per_cpu ? tr::OnlineCpus() : std::vector<int>{-1};
  auto session = AuxSession::Open(attr, pid, cpus, options, kernel);
  if (!session) return abandon(session.error());
  if (auto clock = (*session)->Clock(0); clock) {
    out.have_clock = true;
    out.clock = *clock;
  }
  std::unique_ptr<tr::LiveTriggers> live;
  if (!request.policy.triggers.empty()) {
    auto opened = tr::LiveTriggers::Open(pid, engine, false);
    if (!opened) return abandon(opened.error());
    live = std::move(*opened);
    if (auto st = live->Enable(); !st) return abandon(st.error());
  }
  if (auto st = (*session)->Enable(); !st) return abandon(st.error());
  if (auto st = tr::ResumeLaunched(pid); !st) return abandon(st.error());

  const uint64_t want = request.pre_bytes ? request.pre_bytes : request.aux_bytes;
  // Full mode: everything each event wrote, drained as it goes into a spool file per event.
  std::vector<AuxSpool> whole;
  for (size_t i = 0; request.full && i < (*session)->events(); ++i) {
    auto spool = AuxSpool::Create();
    if (!spool) return abandon(spool.error());
    whole.push_back(std::move(*spool));
  }
  std::vector<uint8_t> drained;
  auto drain_all = [&]() -> Status {
    for (size_t i = 0; i < whole.size(); ++i) {
      drained.clear();
      (*session)->DrainAux(i, drained);
      if (auto st = whole[i].Append(drained); !st) return st;
    }
    return {};
  };
  auto old_int = std::signal(SIGINT, SIG_IGN);
  std::deque<tr::SnapshotDecision> due;
  std::vector<tr::SnapshotDecision> fresh;
  int status = 0;
  bool ended = false;
  Status failed;
  while (failed) {
    const pid_t done = waitpid(pid, &status, WNOHANG);
    ended = done == pid || (done < 0 && errno != EINTR);
    fresh.clear();
    if (live) live->Poll(ended ? 0 : request.poll_ms, fresh, ended);
    else if (!ended) usleep(static_cast<useconds_t>(request.poll_ms) * 1000);
    for (auto& d : fresh) due.push_back(std::move(d));
    // Cut what is due: its --post has passed, or the command ended (nothing more to wait for).
    const uint64_t now = tr::MonotonicNowNs();
    while (!due.empty() && (ended || due.front().cut_ns <= now)) {
      if (!ended) out.maps.push_back(ReadMaps(pid));
      failed = Cut(**session, due.front(), want, request.align, out);
      due.pop_front();
      if (!failed) break;
    }
    if (failed) failed = drain_all();
    for (size_t i = 0; i < (*session)->events(); ++i) (*session)->DrainSideband(i, out.sideband);
    if (ended) break;
  }
  std::signal(SIGINT, old_int);
  if (!failed) {
    if (!ended) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
    }
    return tl::unexpected(failed.error());
  }
  if (request.full) {
    // Disabling flushes what the hardware still buffers; then the last of it is drained.
    (*session)->Disable();
    if (auto st = drain_all(); !st) return tl::unexpected(st.error());
    const uint64_t now = tr::MonotonicNowNs();
    for (size_t i = 0; i < whole.size(); ++i) {
      auto bytes = whole[i].Finish();
      if (!bytes) return tl::unexpected(bytes.error());
      HwSnapshot run;
      run.label = "full";
      run.tid = static_cast<uint32_t>(pid);
      run.time_ns = now;
      run.cpu = (*session)->cpu(i);
      run.bytes = std::move(*bytes);
      out.snapshots.push_back(std::move(run));
      (*session)->DrainSideband(i, out.sideband);
    }
  } else if (request.policy.triggers.empty()) {
    tr::SnapshotDecision at_exit;
    at_exit.label = "exit";
    at_exit.tid = static_cast<uint32_t>(pid);
    at_exit.time_ns = tr::MonotonicNowNs();
    if (auto st = Cut(**session, at_exit, want, request.align, out); !st)
      return tl::unexpected(st.error());
  }
  (*session)->Disable();
  if (WIFEXITED(status)) out.exit_status = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) out.signal = WTERMSIG(status);
  out.fired = engine.fired();
  out.suppressed = engine.suppressed();
  out.lost = live ? live->lost() : 0;
  return out;
}

}  // namespace ptprof::record::hw
