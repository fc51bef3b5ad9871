#include "src/record/qemu_system/system_recorder.h"

#include <elf.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <thread>

#include <fmt/format.h>

#include "sideband/file_bytes.h"
#include "sideband/kallsyms.h"
#include "src/record/qemu_system/system_triggers.h"

namespace ptprof::record {

namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point since) {
  return std::chrono::duration<double>(Clock::now() - since).count();
}

Status WriteBytes(const std::string& path, const std::vector<uint8_t>& bytes) {
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return Fail(path + ": cannot write: " + std::strerror(errno));
  const bool ok = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  if (std::fclose(f) != 0 || !ok) return Fail(path + ": cannot write: " + std::strerror(errno));
  return {};
}

// Runs QEMU; returns whether it exited by itself within the timeout. On timeout it stops that one
// process: SIGTERM (QEMU shuts down and the plugin writes what it holds), SIGKILL after 10 s.
Result<bool> RunQemu(const std::vector<std::string>& args, const std::string& log,
                     unsigned timeout_seconds) {
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = fork();
  if (pid < 0) return Fail(std::string("cannot fork: ") + std::strerror(errno));
  if (pid == 0) {
    int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int null = open("/dev/null", O_RDONLY);
    if (fd >= 0) {
      dup2(fd, 1);
      dup2(fd, 2);
    }
    if (null >= 0) dup2(null, 0);
    execvp(argv[0], argv.data());
    _exit(127);
  }
  const auto deadline = Clock::now() + std::chrono::seconds(timeout_seconds);
  int status = 0;
  bool timed_out = false;
  for (;;) {
    pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    if (done < 0 && errno != EINTR) return Fail(std::string("waitpid: ") + std::strerror(errno));
    if (!timed_out && Clock::now() > deadline) {
      timed_out = true;
      kill(pid, SIGTERM);
      const auto grace = Clock::now() + std::chrono::seconds(10);
      while (waitpid(pid, &status, WNOHANG) == 0) {
        if (Clock::now() > grace) {
          kill(pid, SIGKILL);
          waitpid(pid, &status, 0);
          break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (!timed_out && WIFEXITED(status) && WEXITSTATUS(status) == 127)
    return Fail(args[0] + ": cannot run it (not installed? Debian package qemu-system-x86)");
  if (!timed_out && (!WIFEXITED(status) || WEXITSTATUS(status) != 0)) {
    auto text = ReadFileBytes(log);
    std::string first;
    if (text)
      for (uint8_t c : *text) {
        if (c == '\n') break;
        first += static_cast<char>(c);
      }
    return Fail(fmt::format("{} failed ({}): {}", args[0],
                            WIFEXITED(status) ? fmt::format("exit status {}", WEXITSTATUS(status))
                                              : fmt::format("signal {}", WTERMSIG(status)),
                            first.empty() ? "see " + log : first));
  }
  return !timed_out;
}

}  // namespace

Result<std::string> FindQemuSystemPlugin() {
  if (const char* env = std::getenv("PTPROF_QEMU_SYSTEM_PLUGIN"); env && *env) {
    if (access(env, R_OK) == 0) return std::string(env);
    return Fail(std::string("PTPROF_QEMU_SYSTEM_PLUGIN=") + env + ": cannot read the plugin");
  }
  std::error_code ec;
  auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  std::vector<std::string> candidates;
  if (!ec) {
    auto dir = exe.parent_path();
    for (const char* rel : {"src/record/qemu/", "../src/record/qemu/", "../lib/ptprof/",
                            "../../src/record/qemu/"})
      candidates.push_back((dir / rel / "libptprof_qemu_system.so").lexically_normal().string());
  }
  for (const auto& c : candidates)
    if (access(c.c_str(), R_OK) == 0) return c;
  return Fail("the QEMU system plugin libptprof_qemu_system.so is not next to ptprof (looked in " +
              (candidates.empty() ? std::string("?") : candidates[0]) +
              "); set PTPROF_QEMU_SYSTEM_PLUGIN");
}

std::string DefaultLabKernel() {
  if (const char* env = std::getenv("PTPROF_LAB_KERNEL"); env && *env) return env;
  std::string dir;
  if (const char* env = std::getenv("PTPROF_LAB_DIR"); env && *env) {
    dir = env;
  } else {
    const char* home = std::getenv("HOME");
    dir = std::string(home ? home : "") + "/.cache/ptprof/lab";
  }
  return dir + "/vmlinuz";
}

Result<WorkloadEntry> StaticWorkloadEntry(const std::string& path) {
  auto bytes = ReadFileBytes(path);
  if (!bytes) return tl::unexpected(bytes.error());
  const auto& b = *bytes;
  if (b.size() < sizeof(Elf64_Ehdr) || std::memcmp(b.data(), ELFMAG, SELFMAG) != 0)
    return Fail(path + ": offset 0x0: not an ELF file (the workload must be a static program)");
  Elf64_Ehdr eh;
  std::memcpy(&eh, b.data(), sizeof eh);
  if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_machine != EM_X86_64)
    return Fail(path + ": offset 0x0: not an x86-64 ELF program");
  WorkloadEntry entry;
  entry.address = eh.e_entry;
  bool interp = false;
  for (unsigned i = 0; i < eh.e_phnum; ++i) {
    const uint64_t at = eh.e_phoff + uint64_t{i} * eh.e_phentsize;
    if (at + sizeof(Elf64_Phdr) > b.size())
      return Fail(fmt::format("{}: offset {:#x}: program header {} is cut short", path, at, i));
    Elf64_Phdr ph;
    std::memcpy(&ph, b.data() + at, sizeof ph);
    if (ph.p_type == PT_INTERP) interp = true;
    if (ph.p_type == PT_LOAD && eh.e_entry >= ph.p_vaddr && eh.e_entry < ph.p_vaddr + ph.p_filesz) {
      const uint64_t off = ph.p_offset + (eh.e_entry - ph.p_vaddr);
      const uint64_t n = std::min<uint64_t>({16, ph.p_vaddr + ph.p_filesz - eh.e_entry,
                                             b.size() > off ? b.size() - off : 0});
      entry.bytes.assign(b.begin() + static_cast<std::ptrdiff_t>(off),
                         b.begin() + static_cast<std::ptrdiff_t>(off + n));
    }
  }
  if (interp)
    return Fail(path + ": not statically linked (it needs a program interpreter); the guest has "
                       "no C library: build it with gcc -static");
  if (eh.e_type != ET_EXEC)
    return Fail(path + ": a position-independent program (ELF type " + std::to_string(eh.e_type) +
                "); build it with gcc -static -no-pie so that its entry address is known");
  if (entry.bytes.empty())
    return Fail(fmt::format("{}: the entry point {:#x} is in no loaded segment", path, eh.e_entry));
  return entry;
}

Result<std::pair<uint64_t, uint64_t>> LoadedRange(const std::string& path) {
  auto bytes = ReadFileBytes(path);
  if (!bytes) return tl::unexpected(bytes.error());
  const auto& b = *bytes;
  if (b.size() < sizeof(Elf64_Ehdr) || std::memcmp(b.data(), ELFMAG, SELFMAG) != 0)
    return Fail(path + ": offset 0x0: not an ELF file");
  Elf64_Ehdr eh;
  std::memcpy(&eh, b.data(), sizeof eh);
  uint64_t lo = UINT64_MAX, hi = 0;
  for (unsigned i = 0; i < eh.e_phnum; ++i) {
    const uint64_t at = eh.e_phoff + uint64_t{i} * eh.e_phentsize;
    if (at + sizeof(Elf64_Phdr) > b.size())
      return Fail(fmt::format("{}: offset {:#x}: program header {} is cut short", path, at, i));
    Elf64_Phdr ph;
    std::memcpy(&ph, b.data() + at, sizeof ph);
    if (ph.p_type != PT_LOAD) continue;
    lo = std::min(lo, ph.p_vaddr);
    hi = std::max(hi, ph.p_vaddr + ph.p_memsz);
  }
  if (lo >= hi) return Fail(path + ": no loaded segments");
  return std::make_pair(lo, hi);
}

Result<KernelFacts> KernelFactsFromChannel(const LabChannel& channel, const std::string& name) {
  auto it = channel.files.find("kallsyms");
  if (it == channel.files.end() || it->second.empty())
    return Fail(name + ": the guest sent no kallsyms on its second serial port (the channel is " +
                (channel.values.empty() ? "empty" : "missing the kallsyms file") +
                "); see the console log");
  const std::string_view text(reinterpret_cast<const char*>(it->second.data()), it->second.size());
  auto entries = ParseKallsyms(text, name + ": kallsyms");
  if (!entries) return tl::unexpected(entries.error());
  return KernelFacts::FromKallsyms(*entries, name + ": kallsyms");
}

Result<SystemRecording> RecordWithQemuSystem(const SystemRecordOptions& options) {
  SystemRecording recording;
  if (options.argv.empty()) return Fail("no workload given (-- CMD ARGS)");
  if (access(options.kernel.c_str(), R_OK) != 0)
    return Fail(options.kernel + ": cannot read the guest kernel (" + std::strerror(errno) +
                "); run tools/setup.sh (tools/lab/fetch_kernel.sh) or give --kernel");
  auto workload = FindInPath(options.argv[0]);
  if (!workload) return tl::unexpected(workload.error());
  recording.workload_path = *workload;
  auto entry = StaticWorkloadEntry(*workload);
  if (!entry) return tl::unexpected(entry.error());
  if (access(options.busybox.c_str(), R_OK) != 0)
    return Fail(options.busybox + ": cannot read busybox (Debian package busybox-static)");
  auto plugin = options.plugin.empty() ? FindQemuSystemPlugin() : Result<std::string>(options.plugin);
  if (!plugin) return tl::unexpected(plugin.error());

  LabGuest guest;
  guest.tracer = options.tracer;
  guest.workload_name = std::filesystem::path(*workload).filename().string();
  guest.args.assign(options.argv.begin() + 1, options.argv.end());
  auto initramfs = BuildLabInitramfs(options.busybox, *workload, guest);
  if (!initramfs) return tl::unexpected(initramfs.error());
  const std::string prefix = options.work_prefix;
  const std::string initrd = prefix + ".initramfs", stream_path = prefix + ".stream",
                    channel_path = prefix + ".channel", console = prefix + ".console",
                    log = prefix + ".qemu-log";
  if (auto st = WriteBytes(initrd, *initramfs); !st) return tl::unexpected(st.error());
  std::remove(stream_path.c_str());
  std::remove(channel_path.c_str());

  // Recording ends when busybox runs again: the init shell resumes after the workload exited.
  auto busybox_range = LoadedRange(options.busybox);
  if (!busybox_range) return tl::unexpected(busybox_range.error());
  if (entry->address >= busybox_range->first && entry->address < busybox_range->second)
    return Fail(*workload + ": its entry point lies inside busybox's addresses; link it elsewhere "
                           "(gcc -static -Wl,-Ttext-segment=0x10000000)");
  std::string start_bytes;
  for (uint8_t byte : entry->bytes) start_bytes += fmt::format("{:02x}", byte);
  const std::vector<std::string> args = {
      options.qemu, "-machine", "pc", "-accel", "tcg,thread=single", "-cpu", "qemu64",
      "-smp", std::to_string(options.smp), "-m", "512M", "-nographic", "-no-reboot",
      "-monitor", "none", "-kernel", options.kernel, "-initrd", initrd, "-append",
      "console=ttyS0 panic=-1 nokaslr quiet", "-serial", "file:" + console, "-serial",
      "file:" + channel_path, "-plugin",
      fmt::format("{},out={},start={:#x},start_bytes={},stop_lo={:#x},stop_hi={:#x},channel={}",
                  *plugin, stream_path, entry->address, start_bytes, busybox_range->first,
                  busybox_range->second, channel_path)};
  const auto run_start = Clock::now();
  auto exited = RunQemu(args, log, options.timeout_seconds);
  recording.run_seconds = Seconds(run_start);
  std::remove(initrd.c_str());
  if (!exited) return tl::unexpected(exited.error());
  if (!*exited)
    recording.note = fmt::format("the guest did not power off within {} s: QEMU was stopped",
                                 options.timeout_seconds);

  auto channel_bytes = ReadFileBytes(channel_path);
  if (!channel_bytes) return tl::unexpected(channel_bytes.error());
  auto channel = ParseLabChannel(*channel_bytes, channel_path);
  if (!channel) return tl::unexpected(channel.error());
  recording.channel = std::move(*channel);
  auto facts = KernelFactsFromChannel(recording.channel, channel_path);
  if (!facts) return tl::unexpected(facts.error());
  const auto& kallsyms = recording.channel.files["kallsyms"];
  recording.kallsyms.assign(kallsyms.begin(), kallsyms.end());

  const auto encode_start = Clock::now();
  auto stream_bytes = ReadFileBytes(stream_path);
  if (!stream_bytes) return tl::unexpected(stream_bytes.error());
  recording.stream_bytes = stream_bytes->size();
  if (stream_bytes->size() <= 8)
    return Fail(stream_path + ": the plugin recorded nothing: the workload never started (" +
                (recording.note.empty() ? "see " + console : recording.note) + ")");
  auto stream = ParseQemuStream(*stream_bytes, stream_path);
  if (!stream) return tl::unexpected(stream.error());
  recording.end = stream->end;
  const auto stopped = stream->end.find("stopped");
  const bool was_stopped = stopped != stream->end.end() && stopped->second == "1";
  if (options.flow.triggers) {
    auto entries = ParseKallsyms(std::string_view(reinterpret_cast<const char*>(kallsyms.data()), kallsyms.size()),
                                 channel_path + ": kallsyms");
    if (!entries) return tl::unexpected(entries.error());
    if (auto s = ResolveSystemAddressTriggers(*entries, *workload, *options.flow.triggers); !s)
      return tl::unexpected(s.error());
  }
  for (const QemuThread& vcpu : stream->threads) {
    SystemFlowOptions flow = options.flow;
    // The vCPU whose block stopped the recording went there from its last recorded block.
    if (was_stopped && stream->end.count("stop_vcpu") && stream->end.count("stopped_at") &&
        std::strtoul(stream->end.at("stop_vcpu").c_str(), nullptr, 10) == vcpu.tid)
      flow.final_next = std::strtoull(stream->end.at("stopped_at").c_str(), nullptr, 16);
    auto trace = EncodeVcpu(*stream, vcpu, *facts, flow);
    if (!trace) return tl::unexpected(trace.error());
    recording.vcpus.push_back(std::move(*trace));
  }
  recording.code = CollectCode(*stream, 256, &recording.code_conflicts);
  recording.encode_seconds = Seconds(encode_start);
  if (recording.note.empty() && !stream->complete) recording.note = stream->note;
  if (recording.note.empty() && recording.channel.truncated)
    recording.note = channel_path + ": a file the guest sent is cut short";
  if (recording.note.empty() && !recording.channel.Value("workload_exit"))
    recording.note = "the guest did not report the workload's exit (see " + console + ")";
  recording.complete = recording.note.empty();
  return recording;
}

}  // namespace ptprof::record
