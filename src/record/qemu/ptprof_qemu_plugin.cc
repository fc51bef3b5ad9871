// ptprof's QEMU TCG plugin (QEMU 7.2 plugin API, version 1), loaded by Debian's qemu-x86_64:
//
//   qemu-x86_64 -plugin libptprof_qemu.so,out=STREAM[,mode=trace|count] PROGRAM ARGS
//
// mode=trace (the default) answers "which instructions did each guest thread execute, in order?"
// as compactly as QEMU allows: every translated block is described once (address, instruction
// sizes, code bytes), and each execution of a block costs one 32-bit word in a per-thread buffer,
// written by a per-block callback (no per-instruction callbacks). Syscall entries and returns go
// into the same per-thread stream, so the reader knows where user-only tracing pauses; mmaps of
// executable files go into the sideband. The format is src/record/qemu/stream_format.h.
//
// mode=count answers "how many instructions did QEMU execute?" with an inline per-instruction
// counter and nothing else: the independent count the recorder's output is checked against.
//
// The plugin header is not packaged in Debian, so the few API functions used are declared here.
// Only qemu_plugin_version and qemu_plugin_install are exported (-fvisibility=hidden). The plugin
// uses no C++ runtime state (no exceptions, no static constructors, no iostreams): plain C calls.
#include <fcntl.h>
#include <pthread.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>

#include "src/record/qemu/qemu_plugin_api.h"
#include "src/record/qemu/stream_format.h"

extern "C" {
__attribute__((visibility("default"))) int qemu_plugin_version = 1;
}

namespace {

namespace fmt = ptprof::record::qemu_stream;

constexpr uint32_t kExecWords = 16384;  // 64 KiB of exec words per thread before a write
constexpr size_t kMaxThreads = 4096;
constexpr uint32_t kFlushAtSyscallWords = 256;
constexpr size_t kBlockBufferBytes = 256 * 1024;

// One guest thread's pending exec words.
struct ThreadBuffer {
  uint32_t tid;
  uint32_t used;
  uint32_t lost;            // words dropped since the last written chunk (no room on the disk)
  int64_t syscall_args[7];  // number and arguments of the syscall in progress (for mmap)
  uint32_t words[kExecWords];
};

// The plugin's one state object (the plugin API's shape: C entry points without a context).
struct PluginState {
  int fd = -1;
  bool count_mode = false;
  bool disabled = false;  // in a forked child, or after a write error
  int write_errno = 0;
  uint64_t bytes_written = 0;
  uint32_t seq = 0;
  uint32_t next_block_id = 0;
  bool info_written = false;
  char out_path[1024] = {};
  pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
  uint8_t* blocks = nullptr;  // pending block definitions (one chunk payload)
  size_t blocks_used = 0;
  ThreadBuffer* threads[kMaxThreads] = {};
  size_t thread_count = 0;
  uint64_t insn_count = 0;  // mode=count: the inline counter
  uint64_t dropped_threads = 0;
  uint64_t lost_words = 0;      // exec words dropped for lack of room
  uint64_t refused_chunks = 0;  // chunk writes refused for lack of room
  uint64_t file_size_limit = UINT64_MAX;  // RLIMIT_FSIZE
};

PluginState g_state;
thread_local ThreadBuffer* t_buffer = nullptr;

uint32_t CurrentTid() { return static_cast<uint32_t>(syscall(SYS_gettid)); }

// Writes all of `data`; on failure remembers errno and disables the recording (what was written
// before stays a valid stream of whole chunks).
void WriteAll(const void* data, size_t size) {
  if (g_state.disabled || g_state.fd < 0) return;
  const auto* p = static_cast<const uint8_t*>(data);
  while (size > 0) {
    ssize_t n = write(g_state.fd, p, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      g_state.write_errno = n < 0 ? errno : ENOSPC;
      g_state.disabled = true;
      return;
    }
    p += n;
    size -= static_cast<size_t>(n);
    g_state.bytes_written += static_cast<uint64_t>(n);
  }
}

// Whether `size` more bytes fit on the disk: they are reserved first (fallocate, keeping the
// file size: the reader must not see the reserved bytes before they are written), so that a write
// never stops inside a chunk. A file system without fallocate is trusted to have room.
bool Reserve(size_t size) {
  if (g_state.disabled || g_state.fd < 0) return false;
  if (g_state.bytes_written + size > g_state.file_size_limit) {
    // Past RLIMIT_FSIZE (ulimit -f) a write would raise SIGXFSZ and end the emulator: no room.
    g_state.write_errno = EFBIG;
    ++g_state.refused_chunks;
    return false;
  }
  int r;
  do {
    r = fallocate(g_state.fd, FALLOC_FL_KEEP_SIZE, static_cast<off_t>(g_state.bytes_written),
                  static_cast<off_t>(size));
  } while (r < 0 && errno == EINTR);
  if (r == 0 || (errno != ENOSPC && errno != EDQUOT)) return true;
  g_state.write_errno = errno;
  ++g_state.refused_chunks;
  return false;
}

// Caller holds the lock. Header and payload go out in one write so that chunks stay whole.
// Returns false when there was no room for the chunk (nothing was written).
bool WriteChunkLocked(uint32_t type, uint32_t tid, const void* payload, uint32_t size) {
  static uint8_t scratch[sizeof(fmt::ChunkHeader) + 4 * kExecWords + kBlockBufferBytes];
  if (size > sizeof scratch - sizeof(fmt::ChunkHeader)) return false;
  if (!Reserve(sizeof(fmt::ChunkHeader) + size)) return false;
  fmt::ChunkHeader header{type, tid, size, g_state.seq++};
  std::memcpy(scratch, &header, sizeof header);
  std::memcpy(scratch + sizeof header, payload, size);
  WriteAll(scratch, sizeof header + size);
  return !g_state.disabled;
}

// A chunk that must not be lost (block definitions, the end): waits up to about two seconds for
// room (ptprof frees the part of the stream it has read).
bool WriteChunkWaitingLocked(uint32_t type, uint32_t tid, const void* payload, uint32_t size) {
  for (int attempt = 0; attempt < 2000; ++attempt) {
    if (WriteChunkLocked(type, tid, payload, size)) return true;
    if (g_state.disabled) return false;
    usleep(1000);
  }
  return false;
}

bool FlushBlocksLocked() {
  if (g_state.blocks_used == 0) return true;
  if (!WriteChunkWaitingLocked(fmt::kChunkBlocks, CurrentTid(), g_state.blocks,
                               static_cast<uint32_t>(g_state.blocks_used)))
    return false;
  g_state.blocks_used = 0;
  return true;
}

// Block definitions go out before any exec chunk written after them, so a reader always knows a
// block before it sees it executed. When there is no room, the thread's words are dropped, as a
// PT unit drops packets when its output cannot keep up: a lost tag (with the number of words lost)
// starts the thread's next words, and ptprof encodes an OVF there.
void FlushThreadLocked(ThreadBuffer* buffer) {
  const bool blocks_written = FlushBlocksLocked();
  if (buffer->used == 0) return;
  if (blocks_written &&
      WriteChunkLocked(fmt::kChunkExec, buffer->tid, buffer->words, buffer->used * 4)) {
    buffer->used = 0;
    buffer->lost = 0;
    return;
  }
  if (g_state.disabled) {
    buffer->used = 0;  // nothing is written any more
    return;
  }
  const uint64_t lost = buffer->lost + buffer->used;
  buffer->lost = lost > 0xffffffffu ? 0xffffffffu : static_cast<uint32_t>(lost);
  g_state.lost_words += buffer->used;
  buffer->words[0] = fmt::kTagLost;
  buffer->words[1] = buffer->lost;
  buffer->used = fmt::kLostWords;
}

void FlushThread(ThreadBuffer* buffer) {
  pthread_mutex_lock(&g_state.lock);
  FlushThreadLocked(buffer);
  pthread_mutex_unlock(&g_state.lock);
}

void WriteTextLocked(uint32_t type, const char* text) {
  WriteChunkWaitingLocked(type, CurrentTid(), text, static_cast<uint32_t>(std::strlen(text)));
}

ThreadBuffer* NewThreadBuffer() {
  auto* buffer = static_cast<ThreadBuffer*>(std::calloc(1, sizeof(ThreadBuffer)));
  if (!buffer) std::abort();
  buffer->tid = CurrentTid();
  pthread_mutex_lock(&g_state.lock);
  if (g_state.thread_count < kMaxThreads) {
    g_state.threads[g_state.thread_count++] = buffer;
  } else {
    ++g_state.dropped_threads;  // still recorded, but not flushed at exit_group
  }
  pthread_mutex_unlock(&g_state.lock);
  t_buffer = buffer;
  return buffer;
}

inline ThreadBuffer* Buffer() {
  ThreadBuffer* buffer = t_buffer;
  return buffer ? buffer : NewThreadBuffer();
}

inline void Append(ThreadBuffer* buffer, const uint32_t* words, uint32_t count) {
  if (buffer->used + count > kExecWords) FlushThread(buffer);
  std::memcpy(buffer->words + buffer->used, words, count * 4);
  buffer->used += count;
}

// ---- Callbacks ----

void AppendHostTime(ThreadBuffer* buffer);

void OnBlockExec(unsigned int, void* userdata) {
  if (g_state.disabled) return;
  ThreadBuffer* buffer = Buffer();
  if (buffer->used == kExecWords) {
    FlushThread(buffer);
    // Every full buffer starts with the host time, so the reader has a clock that advances while
    // a thread makes no syscalls (every= triggers, signal times).
    AppendHostTime(buffer);
  }
  buffer->words[buffer->used++] = static_cast<uint32_t>(reinterpret_cast<uintptr_t>(userdata));
}

void WriteInfoLocked() {
  char text[2048];
  std::snprintf(text, sizeof text,
                "binary %s\nstart_code 0x%llx\nend_code 0x%llx\nentry 0x%llx\npid %d\n",
                qemu_plugin_path_to_binary() ? qemu_plugin_path_to_binary() : "",
                static_cast<unsigned long long>(qemu_plugin_start_code()),
                static_cast<unsigned long long>(qemu_plugin_end_code()),
                static_cast<unsigned long long>(qemu_plugin_entry_code()), getpid());
  WriteTextLocked(fmt::kChunkInfo, text);
  g_state.info_written = true;
}

void OnTranslate(qemu_plugin_id_t, struct qemu_plugin_tb* tb) {
  const size_t insns = qemu_plugin_tb_n_insns(tb);
  if (insns == 0) return;
  if (g_state.count_mode) {
    for (size_t i = 0; i < insns; ++i)
      qemu_plugin_register_vcpu_insn_exec_inline(qemu_plugin_tb_get_insn(tb, i),
                                                 QEMU_PLUGIN_INLINE_ADD_U64, &g_state.insn_count,
                                                 1);
    return;
  }
  uint8_t def[sizeof(fmt::BlockDef) + 512 + 4096];
  fmt::BlockDef header{};
  header.insns = static_cast<uint16_t>(insns);
  header.vaddr = qemu_plugin_tb_vaddr(tb);
  size_t code_at = sizeof header + insns;
  size_t bytes = 0;
  // QEMU 7.2 loses the bytes an instruction has on the next page (its reported size is short),
  // so sizes come from the next instruction's address, and bytes from guest memory itself (in
  // user mode the host address maps guest memory linearly). The last instruction's size cannot be
  // known here: up to 15 bytes after its start follow as lookahead, read with process_vm_readv so
  // that an unmapped next page is an error instead of a crash; the reader decodes its length.
  for (size_t i = 0; i < insns && i < 512; ++i) {
    const struct qemu_plugin_insn* insn = qemu_plugin_tb_get_insn(tb, i);
    const uint64_t vaddr = qemu_plugin_insn_vaddr(insn);
    size_t size = qemu_plugin_insn_size(insn);
    if (i + 1 < insns) size = qemu_plugin_insn_vaddr(qemu_plugin_tb_get_insn(tb, i + 1)) - vaddr;
    if (size == 0 || size > 15) size = qemu_plugin_insn_size(insn);
    def[sizeof header + i] = static_cast<uint8_t>(size);
    if (code_at + bytes + 15 > sizeof def) break;
    const void* host = qemu_plugin_insn_haddr(insn);
    size_t want = i + 1 < insns ? size : 15;
    if (host && i + 1 < insns) {
      std::memcpy(def + code_at + bytes, host, size);
      bytes += size;
    } else if (host) {
      struct iovec local = {def + code_at + bytes, want};
      struct iovec remote = {const_cast<void*>(host), want};
      ssize_t got = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
      if (got < static_cast<ssize_t>(size)) {
        std::memcpy(def + code_at + bytes, qemu_plugin_insn_data(insn), qemu_plugin_insn_size(insn));
        got = static_cast<ssize_t>(size);
      }
      bytes += static_cast<size_t>(got);
    } else {
      std::memcpy(def + code_at + bytes, qemu_plugin_insn_data(insn), qemu_plugin_insn_size(insn));
      bytes += size;
    }
  }
  header.bytes = static_cast<uint16_t>(bytes);

  pthread_mutex_lock(&g_state.lock);
  if (!g_state.info_written) WriteInfoLocked();
  header.id = g_state.next_block_id++;
  std::memcpy(def, &header, sizeof header);
  const size_t size = code_at + bytes;
  if (g_state.blocks_used + size > kBlockBufferBytes && !FlushBlocksLocked()) {
    // Block definitions cannot be dropped: the recording ends here (the stream stays valid).
    g_state.disabled = true;
    pthread_mutex_unlock(&g_state.lock);
    return;
  }
  std::memcpy(g_state.blocks + g_state.blocks_used, def, size);
  g_state.blocks_used += size;
  pthread_mutex_unlock(&g_state.lock);
  qemu_plugin_register_vcpu_tb_exec_cb(tb, OnBlockExec, QEMU_PLUGIN_CB_NO_REGS,
                                       reinterpret_cast<void*>(static_cast<uintptr_t>(header.id)));
}

// The host's monotonic time as a kTagHostTime event (syscall-latency triggers measure with it).
void AppendHostTime(ThreadBuffer* buffer) {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  const uint64_t ns = static_cast<uint64_t>(now.tv_sec) * 1000000000u + static_cast<uint64_t>(now.tv_nsec);
  const uint32_t words[fmt::kHostTimeWords] = {fmt::kTagHostTime, static_cast<uint32_t>(ns),
                                               static_cast<uint32_t>(ns >> 32)};
  Append(buffer, words, fmt::kHostTimeWords);
}

void OnSyscall(qemu_plugin_id_t, unsigned int, int64_t num, uint64_t a1, uint64_t a2, uint64_t a3,
               uint64_t a4, uint64_t a5, uint64_t a6, uint64_t, uint64_t) {
  if (g_state.disabled) return;
  ThreadBuffer* buffer = Buffer();
  AppendHostTime(buffer);
  const uint64_t values[7] = {static_cast<uint64_t>(num), a1, a2, a3, a4, a5, a6};
  uint32_t words[fmt::kSyscallWords];
  words[0] = fmt::kTagSyscall;
  for (int i = 0; i < 7; ++i) {
    words[1 + 2 * i] = static_cast<uint32_t>(values[i]);
    words[2 + 2 * i] = static_cast<uint32_t>(values[i] >> 32);
    buffer->syscall_args[i] = static_cast<int64_t>(values[i]);
  }
  Append(buffer, words, fmt::kSyscallWords);
  // QEMU 7.2 calls no plugin callback when a fatal signal ends the guest: what is still buffered
  // then is lost. Writing at syscalls bounds that loss to the work since the last syscall.
  if (buffer->used >= kFlushAtSyscallWords) FlushThread(buffer);
  if (num == SYS_exit) {
    // The thread ends inside this syscall: its words must reach the stream now.
    const uint32_t tag = fmt::kTagThreadExit;
    Append(buffer, &tag, 1);
    FlushThread(buffer);
  }
}

void NoteExecutableMapping(ThreadBuffer* buffer, int64_t address) {
  const int64_t* args = buffer->syscall_args;  // number, addr, len, prot, flags, fd, offset
  const int fd = static_cast<int>(args[5]);
  if ((args[3] & 4 /* PROT_EXEC */) == 0 || fd < 0) return;
  char link[64], path[1024];
  std::snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  ssize_t n = readlink(link, path, sizeof path - 1);
  if (n < 0) n = 0;
  path[n] = '\0';
  char line[1200];
  std::snprintf(line, sizeof line, "mmap %u 0x%llx 0x%llx %lld %lld 0x%llx %s\n", buffer->tid,
                static_cast<unsigned long long>(address),
                static_cast<unsigned long long>(args[2]), static_cast<long long>(args[3]),
                static_cast<long long>(args[4]), static_cast<unsigned long long>(args[6]), path);
  pthread_mutex_lock(&g_state.lock);
  WriteTextLocked(fmt::kChunkSideband, line);
  pthread_mutex_unlock(&g_state.lock);
}

void OnSyscallReturn(qemu_plugin_id_t, unsigned int, int64_t num, int64_t ret) {
  if (g_state.disabled) return;
  ThreadBuffer* buffer = Buffer();
  AppendHostTime(buffer);
  uint32_t words[fmt::kSysretWords] = {
      fmt::kTagSysret, static_cast<uint32_t>(num), static_cast<uint32_t>(num >> 32),
      static_cast<uint32_t>(ret), static_cast<uint32_t>(static_cast<uint64_t>(ret) >> 32)};
  Append(buffer, words, fmt::kSysretWords);
  if (num == SYS_mmap && ret >= 0) NoteExecutableMapping(buffer, ret);
}

void OnExit(qemu_plugin_id_t, void*) {
  if (g_state.count_mode) {
    char text[64];
    int n = std::snprintf(text, sizeof text, "insns %llu\n",
                          static_cast<unsigned long long>(g_state.insn_count));
    WriteAll(text, static_cast<size_t>(n));
  } else {
    pthread_mutex_lock(&g_state.lock);
    for (size_t i = 0; i < g_state.thread_count; ++i) {
      FlushThreadLocked(g_state.threads[i]);
      // Words that found no room leave a lost tag: it is small, try it once more.
      if (g_state.threads[i]->used != 0) FlushThreadLocked(g_state.threads[i]);
    }
    FlushBlocksLocked();
    char text[256];
    std::snprintf(text, sizeof text,
                  "blocks %u\nthreads %zu\ndropped_threads %llu\nlost_words %llu\n",
                  g_state.next_block_id, g_state.thread_count,
                  static_cast<unsigned long long>(g_state.dropped_threads),
                  static_cast<unsigned long long>(g_state.lost_words));
    WriteTextLocked(fmt::kChunkEnd, text);
    pthread_mutex_unlock(&g_state.lock);
  }
  if (g_state.disabled && g_state.write_errno != 0)
    std::fprintf(stderr, "ptprof qemu plugin: %s: write failed after %llu bytes: %s\n",
                 g_state.out_path, static_cast<unsigned long long>(g_state.bytes_written),
                 std::strerror(g_state.write_errno));
  else if (g_state.refused_chunks != 0)
    std::fprintf(stderr, "ptprof qemu plugin: %s: %llu chunks found no room (%s): %llu execution "
                 "words lost\n", g_state.out_path,
                 static_cast<unsigned long long>(g_state.refused_chunks),
                 std::strerror(g_state.write_errno),
                 static_cast<unsigned long long>(g_state.lost_words));
  if (g_state.fd >= 0) close(g_state.fd);
  g_state.fd = -1;
}

// A forked child (the guest called fork) must not write into its parent's stream.
void InForkedChild() { g_state.disabled = true; }

}  // namespace

PTPROF_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t* info, int argc,
                                      char** argv) {
  if (info->system_emulation) {
    std::fprintf(stderr, "ptprof qemu plugin: only user-mode emulation is supported\n");
    return -1;
  }
  const char* out = nullptr;
  for (int i = 0; i < argc; ++i) {
    if (std::strncmp(argv[i], "out=", 4) == 0) {
      out = argv[i] + 4;
    } else if (std::strcmp(argv[i], "mode=count") == 0) {
      g_state.count_mode = true;
    } else if (std::strcmp(argv[i], "mode=trace") != 0) {
      std::fprintf(stderr, "ptprof qemu plugin: unknown argument '%s'\n", argv[i]);
      return -1;
    }
  }
  if (!out) {
    std::fprintf(stderr, "ptprof qemu plugin: missing out=FILE\n");
    return -1;
  }
  std::snprintf(g_state.out_path, sizeof g_state.out_path, "%s", out);
  int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    std::fprintf(stderr, "ptprof qemu plugin: %s: %s\n", out, std::strerror(errno));
    return -1;
  }
  // Keep the stream's descriptor away from the low numbers the guest uses and may close.
  int high = fcntl(fd, F_DUPFD_CLOEXEC, 700);
  if (high >= 0) {
    close(fd);
    fd = high;
  }
  g_state.fd = fd;
  struct rlimit limit;
  if (getrlimit(RLIMIT_FSIZE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY)
    g_state.file_size_limit = limit.rlim_cur;
  pthread_atfork(nullptr, nullptr, InForkedChild);
  if (!g_state.count_mode) {
    g_state.blocks = static_cast<uint8_t*>(std::malloc(kBlockBufferBytes));
    if (!g_state.blocks) return -1;
    for (int attempt = 0; attempt < 2000 && !Reserve(sizeof fmt::kMagic); ++attempt) usleep(1000);
    WriteAll(fmt::kMagic, sizeof fmt::kMagic);
    qemu_plugin_register_vcpu_syscall_cb(id, OnSyscall);
    qemu_plugin_register_vcpu_syscall_ret_cb(id, OnSyscallReturn);
  }
  qemu_plugin_register_vcpu_tb_trans_cb(id, OnTranslate);
  qemu_plugin_register_atexit_cb(id, OnExit, nullptr);
  return 0;
}
