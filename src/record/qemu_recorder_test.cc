#include "src/record/qemu_recorder.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>

#include <catch2/catch.hpp>

#include "decoders/pt/flow_session.h"

using namespace ptprof;
using namespace ptprof::record;

namespace {

class IpSink : public EventSink {
 public:
  void OnEvent(const TraceEvent& event) override {
    if (auto* insn = std::get_if<Instruction>(&event.body)) ips.push_back(insn->ip);
    if (std::holds_alternative<TraceGap>(event.body)) ++gaps;
  }
  std::vector<uint64_t> ips;
  int gaps = 0;
};

bool HaveQemu() {
  if (FindInPath("qemu-x86_64")) return true;
  WARN("SKIP: qemu-x86_64 is not installed (Debian package qemu-user): not recording");
  return false;
}

std::string Workload(const std::string& name) {
  const char* dir = std::getenv("PTPROF_WORKLOADS");
  return std::string(dir ? dir : ".") + "/workload_" + name;
}

// Records `argv` and checks that every thread's trace decodes to the instructions the plugin saw.
QemuRecording RecordAndCheck(std::vector<std::string> argv, const pt::EncoderOptions& encoder) {
  char dir_template[] = "/tmp/ptprof-qemu-test-XXXXXX";
  REQUIRE(mkdtemp(dir_template));
  std::string dir = dir_template;
  QemuRecordOptions options;
  options.argv = std::move(argv);
  options.stream_path = dir + "/stream";
  options.flow.keep_ips = true;
  options.flow.encoder = encoder;
  options.quiet_child = true;
  auto recording = RecordWithQemu(options);
  if (!recording) FAIL(recording.error().message);

  ImageSet images;
  std::string code_file = dir + "/code";
  {
    std::ofstream out(code_file, std::ios::binary);
    for (const auto& region : recording->code)
      out.write(reinterpret_cast<const char*>(region.bytes.data()),
                static_cast<std::streamsize>(region.bytes.size()));
  }
  uint64_t offset = 0;
  for (const auto& region : recording->code) {
    REQUIRE(images.AddRaw(RawImageSpec{code_file, offset, region.bytes.size(), region.address}));
    offset += region.bytes.size();
  }
  for (const auto& thread : recording->threads) {
    INFO("thread " << thread.tid << ": " << thread.insns << " instructions, " << thread.pt.size()
                   << " bytes of PT");
    IpSink sink;
    pt::FlowRequest request;
    request.insns = true;
    auto summary = pt::DecodeFlow(thread.pt, images, request, sink);
    REQUIRE(summary);
    CHECK(sink.gaps == 0);
    CHECK(sink.ips.size() == thread.ips.size());
    size_t first = 0;
    while (first < sink.ips.size() && first < thread.ips.size() &&
           sink.ips[first] == thread.ips[first])
      ++first;
    INFO("first difference at instruction #" << first);
    CHECK(sink.ips == thread.ips);
  }
  std::remove(code_file.c_str());
  std::remove(options.stream_path.c_str());
  rmdir(dir.c_str());
  return std::move(*recording);
}

}  // namespace

TEST_CASE("qemu: a program with recursion, indirect calls and libc decodes instruction by instruction") {
  if (!HaveQemu()) return;
  auto recording = RecordAndCheck({Workload("recursion"), "12"}, {});
  CHECK(recording.complete);
  CHECK(recording.exit_status == 0);
  REQUIRE(recording.threads.size() == 1);
  CHECK(recording.threads[0].insns > 50000);
  CHECK(recording.threads[0].stats.tips > 0);
}

TEST_CASE("qemu: TNT-64, MTC, CYC and frequent PSBs still decode exactly") {
  if (!HaveQemu()) return;
  pt::EncoderOptions encoder;
  encoder.tnt64 = true;
  encoder.emit_timing = true;
  encoder.emit_mtc = true;
  encoder.emit_cyc = true;
  encoder.psb_period = 256;
  auto recording = RecordAndCheck({Workload("recursion"), "10"}, encoder);
  CHECK(recording.threads[0].stats.mtcs > 0);
  CHECK(recording.threads[0].stats.cycs > 0);
  CHECK(recording.threads[0].stats.psbs > 10);
}

TEST_CASE("qemu: every thread of a multi-threaded program decodes exactly") {
  if (!HaveQemu()) return;
  auto recording = RecordAndCheck({Workload("threads")}, {});
  CHECK(recording.threads.size() == 5);
  CHECK(recording.exit_status == 0);
}

TEST_CASE("qemu: a program that takes signals decodes exactly") {
  if (!HaveQemu()) return;
  auto recording = RecordAndCheck({Workload("signals")}, {});
  CHECK(recording.exit_status == 0);
  CHECK(recording.threads[0].signals >= 3);
}

TEST_CASE("qemu: a program that crashes keeps what it recorded") {
  if (!HaveQemu()) return;
  auto recording = RecordAndCheck({Workload("crash")}, {});
  CHECK(recording.signal == 11);
  CHECK_FALSE(recording.complete);  // QEMU runs no plugin callback at a fatal signal
  CHECK(recording.threads[0].insns > 1000);
}

TEST_CASE("qemu: snapshots start at a PSB and end at their trigger") {
  if (!HaveQemu()) return;
  char dir_template[] = "/tmp/ptprof-qemu-snap-XXXXXX";
  REQUIRE(mkdtemp(dir_template));
  QemuRecordOptions options;
  options.argv = {Workload("recursion"), "12"};
  options.stream_path = std::string(dir_template) + "/stream";
  options.flow.keep_ips = true;
  options.flow.buffer_size = 4096;
  options.flow.encoder.psb_period = 512;
  options.flow.snapshot_syscalls = {1};  // write
  options.quiet_child = true;
  auto recording = RecordWithQemu(options);
  REQUIRE(recording);
  std::remove(options.stream_path.c_str());
  rmdir(dir_template);
  ImageSet images;
  std::string code_file = std::string("/tmp/ptprof-snap-code-") + std::to_string(getpid());
  {
    std::ofstream out(code_file, std::ios::binary);
    for (const auto& region : recording->code)
      out.write(reinterpret_cast<const char*>(region.bytes.data()),
                static_cast<std::streamsize>(region.bytes.size()));
  }
  uint64_t offset = 0;
  for (const auto& region : recording->code) {
    REQUIRE(images.AddRaw(RawImageSpec{code_file, offset, region.bytes.size(), region.address}));
    offset += region.bytes.size();
  }
  const auto& thread = recording->threads.at(0);
  REQUIRE(thread.snapshots.size() == 2);  // the printf's write, and the thread's end
  CHECK(thread.snapshots[0].label == "syscall=1");
  CHECK(thread.pt.empty());
  for (const auto& snapshot : thread.snapshots) {
    INFO("snapshot " << snapshot.label << ", " << snapshot.pt.size() << " bytes");
    CHECK(snapshot.pt.size() <= 4096);
    IpSink sink;
    pt::FlowRequest request;
    request.insns = true;
    REQUIRE(pt::DecodeFlow(snapshot.pt, images, request, sink));
    CHECK(sink.gaps == 0);
    REQUIRE(sink.ips.size() <= snapshot.insns);
    REQUIRE(!sink.ips.empty());
    // The snapshot is the executed flow's last instructions before the trigger.
    std::vector<uint64_t> tail(thread.ips.begin() + static_cast<long>(snapshot.insns - sink.ips.size()),
                               thread.ips.begin() + static_cast<long>(snapshot.insns));
    CHECK(sink.ips == tail);
  }
  std::remove(code_file.c_str());
}

TEST_CASE("qemu: a command that does not exist is one clear error") {
  QemuRecordOptions options;
  options.argv = {"ptprof-no-such-command"};
  options.stream_path = "/tmp/unused";
  auto recording = RecordWithQemu(options);
  REQUIRE_FALSE(recording);
  CHECK(recording.error().message.find("ptprof-no-such-command") != std::string::npos);
}
