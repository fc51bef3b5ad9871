#pragma once
// RecordWithQemu answers "what Intel PT trace would this program have produced, on a machine
// without Intel PT?": it runs the program under QEMU user-mode emulation (Debian's qemu-x86_64)
// with ptprof's plugin (src/record/qemu/), reads the plugin's stream (QemuStream) and encodes one
// PT stream per guest thread (EncodeQemuThread). The code the trace needs comes from the plugin
// too: the bytes of every translated block, merged into raw code regions, which decode the trace
// exactly whatever the program mapped (see docs/record.md for why not the ELF files).
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "src/model/result.h"
#include "src/record/qemu_flow.h"
#include "src/record/qemu_stream.h"

namespace ptprof::record {

struct QemuRecordOptions {
  std::vector<std::string> argv;   // program and arguments; argv[0] is looked up in PATH
  std::string qemu = "qemu-x86_64";
  std::string plugin;              // the plugin library; empty: FindQemuPlugin()
  std::string stream_path;         // where the plugin writes its stream (kept for the caller)
  bool punch_consumed = false;     // free the stream's disk space as it is read (not kept)
  QemuFlowOptions flow;
  bool quiet_child = false;        // the program's stdout/stderr to /dev/null
};

// Executed code, as raw bytes at their addresses (non-overlapping, sorted).
struct CodeRegion {
  uint64_t address = 0;
  std::vector<uint8_t> bytes;
};

struct QemuRecording {
  std::vector<QemuThreadTrace> threads;  // in the order the threads first ran
  std::vector<CodeRegion> code;
  std::vector<std::string> sideband;     // the plugin's sideband lines ("mmap ...")
  std::map<std::string, std::string> info;
  uint64_t code_conflicts = 0;  // bytes translated twice with different contents (later wins)
  int exit_status = 0;          // the program's exit status
  int signal = 0;               // the signal that ended it, if any
  bool complete = false;        // the plugin's stream ended normally
  std::string note;             // why not, when it did not
  uint64_t stream_bytes = 0;
  double run_seconds = 0;     // the emulator with the plugin, wall clock
  double encode_seconds = 0;  // reading the stream and encoding PT (while the emulator runs and
                              // after): CPU time of the reader and encoder
};

// Where the plugin library is: $PTPROF_QEMU_PLUGIN, else next to the running executable (build
// tree: src/record/qemu/, install: ../lib/ptprof/).
Result<std::string> FindQemuPlugin();

// The full path of `name` as execvp would find it, or an error naming it.
Result<std::string> FindInPath(const std::string& name);

// Runs the program and encodes its trace. Fails when the emulator or the program cannot be started
// or the stream cannot be read; a program that crashes or a stream cut short still gives a
// recording of what ran before (with `note` saying so).
Result<QemuRecording> RecordWithQemu(const QemuRecordOptions& options);

// Encodes an already-read stream (what RecordWithQemu does after the run).
Result<QemuRecording> EncodeQemuStream(const QemuStream& stream, const QemuFlowOptions& options);

// Merges the code bytes of every translated block into regions. Gaps shorter than `join` bytes
// are filled with zeros (never decoded: every executed instruction's bytes are real).
std::vector<CodeRegion> CollectCode(const QemuStream& stream, uint64_t join, uint64_t* conflicts);

}  // namespace ptprof::record
