#include "src/record/qemu_recorder.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>

#include "sideband/file_bytes.h"
#include "src/record/qemu/stream_format.h"

namespace ptprof::record {

namespace sf = qemu_stream;

namespace {

bool IsExecutableFile(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(path.c_str(), X_OK) == 0;
}

// Thread start times: a thread created by clone starts at its creator's time at the clone.
std::map<uint32_t, uint64_t> ThreadStartTimes(const QemuStream& stream, uint32_t cycles_per_insn) {
  constexpr uint64_t kSysClone = 56, kSysClone3 = 435;
  std::map<uint32_t, std::pair<uint32_t, uint64_t>> created_by;  // child -> (parent, offset)
  for (const QemuThread& thread : stream.threads) {
    uint64_t insns = 0;
    const auto& w = thread.words;
    for (size_t i = 0; i < w.size();) {
      if (w[i] < sf::kFirstTag) {
        if (w[i] < stream.blocks.size()) insns += stream.blocks[w[i]].insns;
        ++i;
      } else if (w[i] == sf::kTagSysret && i + 4 < w.size()) {
        const uint64_t num = uint64_t{w[i + 1]} | (uint64_t{w[i + 2]} << 32);
        const int64_t ret = static_cast<int64_t>(uint64_t{w[i + 3]} | (uint64_t{w[i + 4]} << 32));
        if ((num == kSysClone || num == kSysClone3) && ret > 0)
          created_by[static_cast<uint32_t>(ret)] = {thread.tid, insns * cycles_per_insn};
        i += sf::kSysretWords;
      } else {
        i += w[i] == sf::kTagSyscall ? sf::kSyscallWords : 1;
      }
    }
  }
  std::map<uint32_t, uint64_t> start;
  for (const QemuThread& thread : stream.threads) {
    uint64_t t = 0;
    uint32_t tid = thread.tid;
    for (int depth = 0; depth < 64; ++depth) {  // follow the creators up to the first thread
      auto it = created_by.find(tid);
      if (it == created_by.end()) break;
      t += it->second.second;
      tid = it->second.first;
    }
    start[thread.tid] = t;
  }
  return start;
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
  QemuBlockCache cache(stream);
  auto start = ThreadStartTimes(stream, options.cycles_per_insn);
  for (const QemuThread& thread : stream.threads) {
    auto trace = EncodeQemuThread(stream, thread, cache, options, start[thread.tid]);
    if (!trace) return Fail(fmt::format("thread {}: {}", thread.tid, trace.error().message));
    recording.threads.push_back(std::move(*trace));
  }
  return recording;
}

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

  const auto started = std::chrono::steady_clock::now();
  pid_t child = fork();
  if (child < 0) return Fail(std::string("fork: ") + std::strerror(errno));
  if (child == 0) {
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
  int status = 0;
  while (waitpid(child, &status, 0) < 0) {
    if (errno != EINTR) return Fail(std::string("waitpid: ") + std::strerror(errno));
  }
  const auto ran = std::chrono::steady_clock::now();
  auto bytes = ReadFileBytes(options.stream_path);
  if (!bytes || bytes->empty()) {
    std::string why = WIFEXITED(status) ? fmt::format("exit status {}", WEXITSTATUS(status))
                                        : fmt::format("signal {}", WTERMSIG(status));
    return Fail(fmt::format("{}: the emulator wrote no trace ({}{})", options.stream_path, why,
                            bytes ? "" : ": " + bytes.error().message));
  }
  auto stream = ParseQemuStream(*bytes, options.stream_path);
  if (!stream) return tl::unexpected(stream.error());
  auto recording = EncodeQemuStream(*stream, options.flow);
  if (!recording) return recording;
  recording->stream_bytes = bytes->size();
  recording->run_seconds = std::chrono::duration<double>(ran - started).count();
  recording->encode_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - ran).count();
  if (WIFEXITED(status)) {
    recording->exit_status = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    recording->signal = WTERMSIG(status);
  }
  return recording;
}

}  // namespace ptprof::record
