// ptprof's QEMU TCG plugin for full-system emulation (QEMU 7.2 plugin API, version 1), loaded by
// Debian's qemu-system-x86_64:
//
//   qemu-system-x86_64 ... -plugin libptprof_qemu_system.so,out=STREAM,start=ADDR[,start_bytes=HEX]
//                              [,stop_lo=ADDR,stop_hi=ADDR][,channel=FILE]
//
// It answers "which instructions did each virtual CPU execute, kernel and user, from the moment
// the workload started?" in the stream format of the user-mode plugin (stream_format.h, with the
// system-mode additions of src/record/qemu_system/system_stream_format.h): every translated block
// is described once, each execution of a block costs one 32-bit word in the executing vCPU's
// buffer (an exec chunk's `tid` is the vCPU index). Nothing is written during the boot: recording
// starts when a block at the workload's entry point (`start`, in the user half, optionally with
// its first code bytes `start_bytes`) executes for the first time. Block definitions made before
// then are kept in memory and written when a block first executes after the start. Recording
// stops for good when a block in [stop_lo, stop_hi) executes after the start: the lab passes
// busybox's code range, which runs again only when the init shell resumes after the workload
// exited. With `channel` (the file QEMU writes the guest's second serial port to), the plugin
// reads the guest's "stop_at ADDRESS" line there when the workload starts (the init script sends
// the address of __x64_sys_exit_group before it starts the workload) and stops when a block at
// that address executes: the trace then ends where the workload calls exit_group.
//
// Independently of the block stream, inline counters on the cli, sti, pushf and popf opcodes
// count how often they executed after the start, kernel and user apart (the end chunk reports
// them), so that a count made from the decoded trace can be checked against QEMU's own.
//
// There is no register access in QEMU 7.2 and no syscall callback in system mode: privilege is
// known from the address half only, and the host side finds syscalls and interrupts from the
// kernel's symbols. Run QEMU with one TCG thread (-accel tcg,thread=single) so that the inline
// counters and the buffers are never updated concurrently.
#include <fcntl.h>
#include <pthread.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "src/record/qemu/qemu_plugin_api.h"
#include "src/record/qemu/stream_format.h"

extern "C" {
__attribute__((visibility("default"))) int qemu_plugin_version = 1;
}

namespace {

namespace fmt = ptprof::record::qemu_stream;

constexpr uint32_t kExecWords = 16384;  // 64 KiB of exec words per vCPU before a write
constexpr size_t kMaxVcpus = 64;
constexpr size_t kBlockBufferBytes = 256 * 1024;
constexpr size_t kMaxDefBytes = sizeof(fmt::BlockDef) + 512 + 4096;

// The counted opcodes, kernel half and user half apart (the end chunk's names).
enum Counted { kCli, kSti, kPushf, kPopf, kCounted };
const char* const kCountedNames[kCounted] = {"cli", "sti", "pushf", "popf"};

// One translated block: its definition (BlockDef, sizes, bytes), written when it first executes
// after the start.
struct BlockRecord {
  uint32_t id;
  uint32_t def_size;
  bool written;
  bool is_start;  // the workload's entry: executing it starts the recording
  bool is_stop;   // in the stop range: executing it after the start ends the recording
  uint64_t vaddr;
  uint8_t def[1];  // def_size bytes (allocated with the record)
};

struct VcpuBuffer {
  uint32_t used;
  uint32_t words[kExecWords];
};

struct PluginState {
  int fd = -1;
  bool disabled = false;   // after a write error
  bool recording = false;  // the workload started
  bool stopped = false;    // ... and the stop range ran after it
  uint64_t stop_lo = 0, stop_hi = 0;
  uint64_t stop_address = 0;  // from the channel's stop_at line (0: none)
  unsigned stop_vcpu = 0;
  uint64_t stopped_at = 0;  // the block whose execution stopped the recording
  char channel_path[1024] = {};
  uint64_t at_stop[2][4] = {};  // the inline counters when the recording stopped
  int write_errno = 0;
  uint64_t bytes_written = 0;
  uint32_t seq = 0;
  uint32_t next_block_id = 0;
  uint64_t start_address = 0;
  uint8_t start_bytes[16] = {};
  size_t start_bytes_size = 0;
  char out_path[1024] = {};
  pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
  uint8_t* blocks = nullptr;  // pending block definitions (one chunk payload)
  size_t blocks_used = 0;
  VcpuBuffer* vcpus[kMaxVcpus] = {};
  int smp_vcpus = 1;
  uint64_t executed_blocks = 0;   // block executions recorded
  uint64_t counters[2][kCounted] = {};  // inline counters: [kernel][opcode]
  uint64_t baseline[2][kCounted] = {};  // their values at the start
};

PluginState g_state;

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

// Caller holds the lock. Header and payload go out in one write so that chunks stay whole.
void WriteChunkLocked(uint32_t type, uint32_t tid, const void* payload, uint32_t size) {
  static uint8_t scratch[sizeof(fmt::ChunkHeader) + 4 * kExecWords + kBlockBufferBytes];
  fmt::ChunkHeader header{type, tid, size, g_state.seq++};
  if (size > sizeof scratch - sizeof header) return;
  std::memcpy(scratch, &header, sizeof header);
  std::memcpy(scratch + sizeof header, payload, size);
  WriteAll(scratch, sizeof header + size);
}

void FlushBlocksLocked() {
  if (g_state.blocks_used == 0) return;
  WriteChunkLocked(fmt::kChunkBlocks, 0, g_state.blocks, static_cast<uint32_t>(g_state.blocks_used));
  g_state.blocks_used = 0;
}

// Block definitions go out before the exec words that use them.
void FlushVcpuLocked(unsigned vcpu) {
  FlushBlocksLocked();
  VcpuBuffer* buffer = g_state.vcpus[vcpu];
  if (!buffer || buffer->used == 0) return;
  WriteChunkLocked(fmt::kChunkExec, vcpu, buffer->words, buffer->used * 4);
  buffer->used = 0;
}

void WriteDefLocked(BlockRecord* block) {
  if (g_state.blocks_used + block->def_size > kBlockBufferBytes) FlushBlocksLocked();
  std::memcpy(g_state.blocks + g_state.blocks_used, block->def, block->def_size);
  g_state.blocks_used += block->def_size;
  block->written = true;
}

// The guest's "stop_at ADDRESS" line in the channel file, or 0.
uint64_t ReadStopAddress() {
  if (!g_state.channel_path[0]) return 0;
  int fd = open(g_state.channel_path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  static char text[1 << 16];  // the line comes before the kallsyms file
  ssize_t n = read(fd, text, sizeof text - 1);
  close(fd);
  if (n <= 0) return 0;
  text[n] = '\0';
  const char* line = std::strstr(text, "\nstop_at ");
  if (!line) return 0;
  return std::strtoull(line + 9, nullptr, 16);
}

void StartLocked() {
  g_state.recording = true;
  g_state.stop_address = ReadStopAddress();
  std::memcpy(g_state.baseline, g_state.counters, sizeof g_state.baseline);
  char text[256];
  std::snprintf(text, sizeof text, "mode system\nvcpus %d\nstart 0x%llx\n", g_state.smp_vcpus,
                static_cast<unsigned long long>(g_state.start_address));
  WriteChunkLocked(fmt::kChunkInfo, 0, text, static_cast<uint32_t>(std::strlen(text)));
}

// ---- Callbacks ----

void OnBlockExec(unsigned int vcpu, void* userdata) {
  auto* block = static_cast<BlockRecord*>(userdata);
  if (g_state.recording && (block->is_stop || block->vaddr == g_state.stop_address)) {
    pthread_mutex_lock(&g_state.lock);
    g_state.stop_vcpu = vcpu;
    g_state.stopped_at = block->vaddr;
    g_state.recording = false;
    g_state.stopped = true;
    std::memcpy(g_state.at_stop, g_state.counters, sizeof g_state.at_stop);
    pthread_mutex_unlock(&g_state.lock);
    return;
  }
  if (!g_state.recording) {
    if (!block->is_start || g_state.stopped || g_state.disabled) return;
    pthread_mutex_lock(&g_state.lock);
    StartLocked();
    pthread_mutex_unlock(&g_state.lock);
  }
  if (g_state.disabled || vcpu >= kMaxVcpus) return;
  VcpuBuffer* buffer = g_state.vcpus[vcpu];
  if (!block->written || !buffer || buffer->used == kExecWords) {
    pthread_mutex_lock(&g_state.lock);
    if (!g_state.vcpus[vcpu]) {
      g_state.vcpus[vcpu] = static_cast<VcpuBuffer*>(std::calloc(1, sizeof(VcpuBuffer)));
      if (!g_state.vcpus[vcpu]) std::abort();
    }
    buffer = g_state.vcpus[vcpu];
    if (!block->written) WriteDefLocked(block);
    if (buffer->used == kExecWords) FlushVcpuLocked(vcpu);
    pthread_mutex_unlock(&g_state.lock);
  }
  buffer->words[buffer->used++] = block->id;
  ++g_state.executed_blocks;
}

// Which counted opcode the instruction is (after legacy and REX prefixes), or kCounted.
int CountedOpcode(const uint8_t* bytes, size_t size) {
  size_t i = 0;
  while (i < size && (bytes[i] == 0x66 || bytes[i] == 0xf2 || bytes[i] == 0xf3 ||
                      bytes[i] == 0x2e || bytes[i] == 0x3e || bytes[i] == 0x26 ||
                      bytes[i] == 0x36 || bytes[i] == 0x64 || bytes[i] == 0x65))
    ++i;
  if (i < size && (bytes[i] & 0xf0) == 0x40) ++i;  // REX
  if (i >= size) return kCounted;
  switch (bytes[i]) {
    case 0xfa: return kCli;
    case 0xfb: return kSti;
    case 0x9c: return kPushf;
    case 0x9d: return kPopf;
    default: return kCounted;
  }
}

bool KernelHalf(uint64_t address) { return (address >> 63) != 0; }

void OnTranslate(qemu_plugin_id_t, struct qemu_plugin_tb* tb) {
  const size_t insns = qemu_plugin_tb_n_insns(tb);
  if (insns == 0) return;
  uint8_t def[kMaxDefBytes];
  fmt::BlockDef header{};
  header.insns = static_cast<uint16_t>(insns);
  header.vaddr = qemu_plugin_tb_vaddr(tb);
  const size_t code_at = sizeof header + insns;
  size_t bytes = 0;
  const int half = KernelHalf(header.vaddr) ? 1 : 0;
  // Sizes come from the next instruction's address (QEMU 7.2 reports a page-crossing instruction
  // short). Bytes come from QEMU's copy of the instruction; the last instruction gets 15 bytes of
  // lookahead from guest RAM when its page is RAM, so that the reader can decode its length.
  for (size_t i = 0; i < insns && i < 512; ++i) {
    const struct qemu_plugin_insn* insn = qemu_plugin_tb_get_insn(tb, i);
    const uint64_t vaddr = qemu_plugin_insn_vaddr(insn);
    const size_t reported = qemu_plugin_insn_size(insn);
    size_t size = reported;
    if (i + 1 < insns) size = qemu_plugin_insn_vaddr(qemu_plugin_tb_get_insn(tb, i + 1)) - vaddr;
    if (size == 0 || size > 15) size = reported;
    def[sizeof header + i] = static_cast<uint8_t>(size);
    if (code_at + bytes + 16 > sizeof def) break;
    const uint8_t* data = static_cast<const uint8_t*>(qemu_plugin_insn_data(insn));
    const bool last = i + 1 == insns;
    const uint8_t* host = static_cast<const uint8_t*>(qemu_plugin_insn_haddr(insn));
    size_t take = last ? 15 : size;
    const bool same_page = ((vaddr & 0xfff) + take) <= 0x1000;
    if (reported >= take) {
      std::memcpy(def + code_at + bytes, data, take);
    } else if (host && same_page) {
      std::memcpy(def + code_at + bytes, host, take);
    } else {
      // Crosses a page: what QEMU kept, then the rest from the next guest page when it is
      // contiguous in host memory (kernel text is); the reader checks the decoded length.
      std::memcpy(def + code_at + bytes, data, reported);
      if (host) std::memcpy(def + code_at + bytes + reported, host + reported, take - reported);
      else std::memset(def + code_at + bytes + reported, 0, take - reported);
    }
    const int counted = CountedOpcode(def + code_at + bytes, size);
    if (counted != kCounted)
      qemu_plugin_register_vcpu_insn_exec_inline(const_cast<struct qemu_plugin_insn*>(insn),
                                                 QEMU_PLUGIN_INLINE_ADD_U64,
                                                 &g_state.counters[half][counted], 1);
    bytes += take;
    if (last) break;
  }
  header.bytes = static_cast<uint16_t>(bytes);
  const size_t def_size = code_at + bytes;
  auto* block = static_cast<BlockRecord*>(std::malloc(sizeof(BlockRecord) + def_size));
  if (!block) std::abort();
  pthread_mutex_lock(&g_state.lock);
  header.id = g_state.next_block_id++;
  pthread_mutex_unlock(&g_state.lock);
  std::memcpy(def, &header, sizeof header);
  block->id = header.id;
  block->def_size = static_cast<uint32_t>(def_size);
  block->written = false;
  block->is_start = header.vaddr == g_state.start_address &&
                    std::memcmp(def + code_at, g_state.start_bytes,
                                g_state.start_bytes_size < bytes ? g_state.start_bytes_size
                                                                 : bytes) == 0;
  block->is_stop = header.vaddr >= g_state.stop_lo && header.vaddr < g_state.stop_hi;
  block->vaddr = header.vaddr;
  std::memcpy(block->def, def, def_size);
  // The record lives as long as QEMU: a retranslated block gets a new record and id.
  qemu_plugin_register_vcpu_tb_exec_cb(tb, OnBlockExec, QEMU_PLUGIN_CB_NO_REGS, block);
}

void OnExit(qemu_plugin_id_t, void*) {
  pthread_mutex_lock(&g_state.lock);
  for (unsigned v = 0; v < kMaxVcpus; ++v) FlushVcpuLocked(v);
  FlushBlocksLocked();
  char text[1024];
  const bool started = g_state.recording || g_state.stopped;
  if (!g_state.stopped) std::memcpy(g_state.at_stop, g_state.counters, sizeof g_state.at_stop);
  int n = std::snprintf(text, sizeof text,
                        "started %d\nstopped %d\nstop_vcpu %u\nstopped_at 0x%llx\n"
                        "blocks %u\nexecuted_blocks %llu\n",
                        started ? 1 : 0, g_state.stopped ? 1 : 0, g_state.stop_vcpu,
                        static_cast<unsigned long long>(g_state.stopped_at), g_state.next_block_id,
                        static_cast<unsigned long long>(g_state.executed_blocks));
  for (int half = 0; half < 2; ++half)
    for (int k = 0; k < kCounted; ++k)
      n += std::snprintf(text + n, sizeof text - static_cast<size_t>(n), "count_%s_%s %llu\n",
                         half ? "kernel" : "user", kCountedNames[k],
                         static_cast<unsigned long long>(g_state.at_stop[half][k] -
                                                         g_state.baseline[half][k]));
  if (started) WriteChunkLocked(fmt::kChunkEnd, 0, text, static_cast<uint32_t>(n));
  pthread_mutex_unlock(&g_state.lock);
  if (g_state.write_errno != 0)
    std::fprintf(stderr, "ptprof qemu system plugin: %s: write failed after %llu bytes: %s\n",
                 g_state.out_path, static_cast<unsigned long long>(g_state.bytes_written),
                 std::strerror(g_state.write_errno));
  if (g_state.fd >= 0) close(g_state.fd);
  g_state.fd = -1;
}

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

PTPROF_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t* info, int argc,
                                      char** argv) {
  if (!info->system_emulation) {
    std::fprintf(stderr, "ptprof qemu system plugin: only full-system emulation is supported\n");
    return -1;
  }
  g_state.smp_vcpus = info->system.smp_vcpus;
  const char* out = nullptr;
  bool have_start = false;
  for (int i = 0; i < argc; ++i) {
    if (std::strncmp(argv[i], "out=", 4) == 0) {
      out = argv[i] + 4;
    } else if (std::strncmp(argv[i], "start=", 6) == 0) {
      char* end = nullptr;
      g_state.start_address = std::strtoull(argv[i] + 6, &end, 0);
      have_start = end && *end == '\0';
    } else if (std::strncmp(argv[i], "channel=", 8) == 0) {
      std::snprintf(g_state.channel_path, sizeof g_state.channel_path, "%s", argv[i] + 8);
    } else if (std::strncmp(argv[i], "stop_lo=", 8) == 0) {
      g_state.stop_lo = std::strtoull(argv[i] + 8, nullptr, 0);
    } else if (std::strncmp(argv[i], "stop_hi=", 8) == 0) {
      g_state.stop_hi = std::strtoull(argv[i] + 8, nullptr, 0);
    } else if (std::strncmp(argv[i], "start_bytes=", 12) == 0) {
      const char* hex = argv[i] + 12;
      size_t n = std::strlen(hex) / 2;
      if (n > sizeof g_state.start_bytes) n = sizeof g_state.start_bytes;
      for (size_t k = 0; k < n; ++k) {
        int hi = HexDigit(hex[2 * k]), lo = HexDigit(hex[2 * k + 1]);
        if (hi < 0 || lo < 0) {
          std::fprintf(stderr, "ptprof qemu system plugin: bad start_bytes '%s'\n", hex);
          return -1;
        }
        g_state.start_bytes[k] = static_cast<uint8_t>(hi * 16 + lo);
      }
      g_state.start_bytes_size = n;
    } else {
      std::fprintf(stderr, "ptprof qemu system plugin: unknown argument '%s'\n", argv[i]);
      return -1;
    }
  }
  if (!out || !have_start) {
    std::fprintf(stderr, "ptprof qemu system plugin: needs out=FILE and start=ADDRESS\n");
    return -1;
  }
  std::snprintf(g_state.out_path, sizeof g_state.out_path, "%s", out);
  int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    std::fprintf(stderr, "ptprof qemu system plugin: %s: %s\n", out, std::strerror(errno));
    return -1;
  }
  g_state.fd = fd;
  g_state.blocks = static_cast<uint8_t*>(std::malloc(kBlockBufferBytes));
  if (!g_state.blocks) return -1;
  WriteAll(fmt::kMagic, sizeof fmt::kMagic);
  qemu_plugin_register_vcpu_tb_trans_cb(id, OnTranslate);
  qemu_plugin_register_atexit_cb(id, OnExit, nullptr);
  return 0;
}
