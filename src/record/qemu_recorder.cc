#include "src/record/qemu_recorder.h"

#include "src/record/triggers/process_probes.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>

#include "src/record/qemu/stream_format.h"
#include "src/record/qemu_stream_encoder.h"

namespace ptprof::record {


namespace {

bool IsExecutableFile(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(path.c_str(), X_OK) == 0;
}

}  // namespace

Result<std::string> FindInPath(const std::string& name) {
  if (name.empty()) return Fail("no command given");
  if (name.find('/') != std::string::npos) {
    if (IsExecutableFile(name)) return name;
    return Fail(name + ": no such executable file");
  }
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/bin:/bin";
  size_t at = 0;
  while (at <= dirs.size()) {
    size_t end = dirs.find(':', at);
    if (end == std::string::npos) end = dirs.size();
    std::string dir = dirs.substr(at, end - at);
    std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
    if (IsExecutableFile(candidate)) return candidate;
    at = end + 1;
  }
  return Fail(name + ": command not found in PATH");
}

Result<std::string> FindQemuPlugin() {
  if (const char* env = std::getenv("PTPROF_QEMU_PLUGIN"); env && *env) {
    if (access(env, R_OK) == 0) return std::string(env);
    return Fail(std::string("PTPROF_QEMU_PLUGIN=") + env + ": cannot read the plugin");
  }
  std::error_code ec;
  auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  std::vector<std::string> candidates;
  if (!ec) {
    auto dir = exe.parent_path();
    candidates.push_back((dir / "src/record/qemu/libptprof_qemu.so").string());
    candidates.push_back((dir / "../src/record/qemu/libptprof_qemu.so").string());
    candidates.push_back((dir / "../lib/ptprof/libptprof_qemu.so").string());
  }
  for (const auto& c : candidates)
    if (access(c.c_str(), R_OK) == 0) return c;
  return Fail("the QEMU plugin libptprof_qemu.so is not next to ptprof (looked in " +
              (candidates.empty() ? std::string("?") : candidates[0]) +
              "); set PTPROF_QEMU_PLUGIN");
}

std::vector<CodeRegion> CollectCode(const QemuStream& stream, uint64_t join, uint64_t* conflicts) {
  std::vector<uint32_t> order;
  for (uint32_t id = 0; id < stream.blocks.size(); ++id)
    if (stream.blocks[id].defined && stream.blocks[id].bytes > 0) order.push_back(id);
  // By address; for the same address the later translation (higher id) wins.
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    return stream.blocks[a].vaddr != stream.blocks[b].vaddr
               ? stream.blocks[a].vaddr < stream.blocks[b].vaddr
               : a < b;
  });
  std::vector<CodeRegion> regions;
  uint64_t bad = 0;
  for (uint32_t id : order) {
    const QemuBlock& block = stream.blocks[id];
    const uint8_t* code = stream.CodeOf(block);
    if (regions.empty() ||
        block.vaddr > regions.back().address + regions.back().bytes.size() + join) {
      regions.push_back({block.vaddr, {}});
    }
    CodeRegion& region = regions.back();
    const uint64_t offset = block.vaddr - region.address;
    if (region.bytes.size() < offset + block.bytes) region.bytes.resize(offset + block.bytes, 0);
    for (uint16_t i = 0; i < block.bytes; ++i) {
      uint8_t& byte = region.bytes[offset + i];
      if (offset + i < region.bytes.size() && byte != code[i] && byte != 0) ++bad;
      byte = code[i];
    }
  }
  if (conflicts) *conflicts = bad;
  return regions;
}

Result<QemuRecording> EncodeQemuStream(const QemuStream& stream, const QemuFlowOptions& options) {
  QemuRecording recording;
  recording.info = stream.info;
  recording.sideband = stream.sideband;
  recording.complete = stream.complete;
  recording.note = stream.note;
  recording.code = CollectCode(stream, 256, &recording.code_conflicts);
  QemuStreamEncoder encoder(stream, options);
  for (const QemuThread& thread : stream.threads)
    if (auto s = encoder.OnExec(thread.tid, thread.words.data(), thread.words.size()); !s)
      return tl::unexpected(s.error());
  auto traces = encoder.Finish();
  if (!traces) return tl::unexpected(traces.error());
  recording.threads = std::move(*traces);
  return recording;
}

namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

// CPU time of the calling thread: what encoding costs, whatever else the machine runs.
double ThreadCpuSeconds() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) * 1e-9;
}

// Reads the stream the emulator (process `child`) is writing to `fd` as it grows, encodes it
// and waits for the emulator's exit. Consumed parts of the file are punched out when asked, so
// the disk holds only what is not read yet.
struct StreamFollower {
  int fd = -1;
  pid_t child = -1;
  bool punch = false;
  triggers::ProcessProbes* probes = nullptr;  // signal= triggers: deliveries to the emulator
  int status = 0;
  uint64_t bytes = 0;
  double encode_seconds = 0;
  Clock::time_point exited_at;

  Status Run(QemuStreamReader& reader, QemuStreamEncoder& encoder) {
    std::vector<uint8_t> buffer(4 << 20);
    size_t have = 0;
    uint64_t punched = 0;
    bool exited = false;
    auto on_exec = [&](uint32_t tid, const uint32_t* words, size_t count) {
      return encoder.OnExec(tid, words, count);
    };
    std::vector<triggers::TriggerEvent> signals;
    for (;;) {
      if (probes) {
        signals.clear();
        probes->Drain(signals);
        for (const auto& e : signals)
          if (auto s = encoder.OnTriggerEvent(e); !s) return s;
      }
      const ssize_t n = read(fd, buffer.data() + have, buffer.size() - have);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return Fail(std::string("reading the stream: ") + std::strerror(errno));
      if (n == 0) {
        if (exited) break;
        int status_now = 0;
        const pid_t r = waitpid(child, &status_now, WNOHANG);
        if (r == child) {
          exited = true;
          status = status_now;
          exited_at = Clock::now();
        } else if (r < 0 && errno != EINTR) {
          return Fail(std::string("waitpid: ") + std::strerror(errno));
        } else {
          usleep(1000);
        }
        continue;
      }
      have += static_cast<size_t>(n);
      bytes += static_cast<uint64_t>(n);
      const double t0 = ThreadCpuSeconds();
      auto consumed = reader.Consume(buffer.data(), have, on_exec);
      encode_seconds += ThreadCpuSeconds() - t0;
      if (!consumed) return tl::unexpected(consumed.error());
      std::memmove(buffer.data(), buffer.data() + *consumed, have - *consumed);
      have -= *consumed;
      if (have == buffer.size()) buffer.resize(buffer.size() * 2);  // a chunk bigger than it
      if (punch && reader.offset() - punched >= (1u << 20)) {
        const uint64_t upto = reader.offset() & ~uint64_t{4095};
        fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, static_cast<off_t>(punched),
                  static_cast<off_t>(upto - punched));
        punched = upto;
      }
    }
    reader.Finish(have);
    return {};
  }
};

}  // namespace

Result<QemuRecording> RecordWithQemu(const QemuRecordOptions& options) {
  if (options.argv.empty()) return Fail("no command to record");
  auto qemu = FindInPath(options.qemu);
  if (!qemu)
    return Fail(options.qemu + ": not found in PATH: the qemu backend needs QEMU user-mode "
                "emulation (Debian package qemu-user; tools/setup.sh installs it)");
  auto program = FindInPath(options.argv[0]);
  if (!program) return tl::unexpected(program.error());
  std::string plugin = options.plugin;
  if (plugin.empty()) {
    auto found = FindQemuPlugin();
    if (!found) return tl::unexpected(found.error());
    plugin = *found;
  }
  if (options.stream_path.empty()) return Fail("no path for the plugin's stream");
  if (options.stream_path.find(',') != std::string::npos)
    return Fail(options.stream_path + ": the stream path must not contain ','");

  std::vector<std::string> args = {*qemu, "-plugin", plugin + ",out=" + options.stream_path,
                                   "-0", options.argv[0], *program};
  args.insert(args.end(), options.argv.begin() + 1, options.argv.end());
  std::vector<char*> cargs;
  for (auto& a : args) cargs.push_back(a.data());
  cargs.push_back(nullptr);

  // The stream file exists before the emulator starts, so that it can be followed from the start.
  const int fd = open(options.stream_path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Fail(options.stream_path + ": " + std::strerror(errno));
  // The child waits for a byte on `go` before it starts the emulator, so that the probes of
  // signal= triggers are watching before the program can send its first signal (it may finish
  // before a busy machine lets this process open them).
  int go[2];
  if (pipe2(go, O_CLOEXEC) != 0) {
    close(fd);
    return Fail(std::string("pipe: ") + std::strerror(errno));
  }
  pid_t child = fork();
  if (child < 0) {
    close(fd);
    close(go[0]);
    close(go[1]);
    return Fail(std::string("fork: ") + std::strerror(errno));
  }
  if (child == 0) {
    close(go[1]);
    char byte = 0;
    ssize_t got;
    while ((got = read(go[0], &byte, 1)) < 0 && errno == EINTR) {
    }
    if (got != 1) _exit(127);  // the recorder gave up before the start
    if (options.quiet_child) {
      int null = open("/dev/null", O_WRONLY);
      if (null >= 0) {
        dup2(null, 1);
        dup2(null, 2);
      }
    }
    execv(cargs[0], cargs.data());
    _exit(127);
  }
  QemuStreamReader reader(options.stream_path);
  QemuStreamEncoder encoder(reader.stream(), options.flow);
  // signal=: the emulator receives the guest's signals as host signals (same thread ids).
  std::unique_ptr<triggers::ProcessProbes> probes;
  if (options.flow.triggers && !options.flow.triggers->Signals().empty()) {
    triggers::ProcessProbes::Options probe_options;
    probe_options.signals = true;
    auto opened = triggers::ProcessProbes::Open(child, probe_options);
    Status enabled = opened ? (*opened)->Enable() : Status(tl::unexpected(opened.error()));
    if (!enabled) {
      close(go[0]);
      close(go[1]);
      kill(child, SIGKILL);
      while (waitpid(child, nullptr, 0) < 0 && errno == EINTR) {
      }
      close(fd);
      return tl::unexpected(enabled.error());
    }
    probes = std::move(*opened);
  }
  close(go[0]);
  const auto started = Clock::now();
  const char byte = 1;
  while (write(go[1], &byte, 1) < 0 && errno == EINTR) {
  }
  close(go[1]);
  StreamFollower follower;
  follower.probes = probes.get();
  follower.fd = fd;
  follower.child = child;
  follower.punch = options.punch_consumed;
  Status followed = follower.Run(reader, encoder);
  close(fd);
  if (!followed) {
    kill(child, SIGKILL);
    while (waitpid(child, nullptr, 0) < 0 && errno == EINTR) {
    }
    return tl::unexpected(followed.error());
  }
  const int status = follower.status;
  if (follower.bytes == 0) {
    std::string why = WIFEXITED(status) ? fmt::format("exit status {}", WEXITSTATUS(status))
                                        : fmt::format("signal {}", WTERMSIG(status));
    return Fail(fmt::format("{}: the emulator wrote no trace ({})", options.stream_path, why));
  }
  const double t0 = ThreadCpuSeconds();
  auto traces = encoder.Finish();
  if (!traces) return tl::unexpected(traces.error());
  QemuRecording recording;
  const QemuStream& stream = reader.stream();
  recording.threads = std::move(*traces);
  recording.info = stream.info;
  recording.sideband = stream.sideband;
  recording.complete = stream.complete;
  recording.note = stream.note;
  recording.code = CollectCode(stream, 256, &recording.code_conflicts);
  recording.stream_bytes = follower.bytes;
  recording.run_seconds = Seconds(follower.exited_at - started);
  recording.encode_seconds = follower.encode_seconds + ThreadCpuSeconds() - t0;
  if (WIFEXITED(status)) {
    recording.exit_status = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    recording.signal = WTERMSIG(status);
  }
  return recording;
}

}  // namespace ptprof::record
