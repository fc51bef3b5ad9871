#pragma once
// The binary stream ptprof's QEMU plugin writes and QemuStream reads (docs/formats/qemu-stream.md).
// It is shared by both sides and is plain data: no C++ runtime, so that the plugin stays small.
//
// A stream is the 8-byte magic followed by chunks. Every chunk starts with a ChunkHeader; its
// payload is `size` bytes. A chunk is written with one write() call, so a stream cut short (full
// disk, killed process) ends with whole chunks, possibly followed by one partial chunk that the
// reader reports and ignores.
#include <cstdint>

namespace ptprof::record::qemu_stream {

inline constexpr char kMagic[8] = {'P', 'T', 'P', 'Q', 'E', 'M', 'U', '1'};

enum ChunkType : uint32_t {
  // Text lines "key value\n": binary path, start/end/entry of the main program, pid, versions.
  kChunkInfo = 1,
  // Translated blocks, each a BlockDef followed by `insns` instruction sizes (one byte each) and
  // `bytes` bytes of code. Ids are unique for the whole stream (a retranslation gets a new id).
  kChunkBlocks = 2,
  // One thread's execution, in order: 32-bit words, each a block id or an event tag (below).
  kChunkExec = 3,
  // Text lines of sideband: "mmap tid addr len prot flags offset path", "exec tid path", ...
  kChunkSideband = 4,
  // The stream ended normally: text lines "key value\n" (exit code, counters).
  kChunkEnd = 5,
};

struct ChunkHeader {
  uint32_t type;
  uint32_t tid;   // the thread (guest tid) of an exec chunk; the writer's tid otherwise
  uint32_t size;  // payload bytes after this header
  uint32_t seq;   // chunk sequence number over the whole stream (the order writes happened)
};

struct BlockDef {
  uint32_t id;
  uint16_t insns;
  uint16_t bytes;
  uint64_t vaddr;
};

// Words of an exec chunk at or above kFirstTag are events; the words after the tag are its payload.
inline constexpr uint32_t kFirstTag = 0xffffff00u;
enum ExecTag : uint32_t {
  // Syscall entry: number, then six arguments, each as two words (low, high).
  kTagSyscall = 0xffffff01u,
  // Syscall return: number, then return value, each as two words (low, high).
  kTagSysret = 0xffffff02u,
  // The exec stream of this thread continues after a flush; no payload (used at thread exit).
  kTagThreadExit = 0xffffff03u,
  // The plugin could not write some of this thread's words (a write failed, e.g. a full disk):
  // they are lost, execution goes on with the next word. Payload: the number of words lost
  // (one word, saturating). Added after the first version of the format (older readers misread it).
  kTagLost = 0xffffff04u,
  // The host's CLOCK_MONOTONIC time in ns (two words: low, high), written right before every
  // kTagSyscall (before QEMU runs the syscall) and kTagSysret (after it returned): the wall-clock
  // latency of each guest syscall, for syscall-latency triggers. Added in the third version.
  kTagHostTime = 0xffffff05u,
};
inline constexpr uint32_t kSyscallWords = 1 + 2 * 7;
inline constexpr uint32_t kSysretWords = 1 + 2 * 2;
inline constexpr uint32_t kLostWords = 1 + 1;
inline constexpr uint32_t kHostTimeWords = 1 + 2;

}  // namespace ptprof::record::qemu_stream
