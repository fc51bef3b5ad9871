#include "decoders/pt/ptdump_writer.h"

#include <catch2/catch.hpp>

#include "decoders/pt/packet_test_encoder.h"

using namespace ptprof::pt;
using namespace ptprof::pt::testing;

namespace {
std::string Dump(const std::vector<uint8_t>& trace, const PtParams& params,
                 const PtdumpOptions& options, int* status = nullptr) {
  std::string out;
  PtdumpWriter writer(params, options, [&](std::string_view text) { out += text; });
  const int result = writer.Dump(trace);
  if (status) *status = result;
  return out;
}

PtParams Timing(uint8_t mtc_freq, uint32_t eax, uint32_t ebx) {
  PtParams params;
  params.mtc_freq = mtc_freq;
  params.cpuid_0x15_eax = eax;
  params.cpuid_0x15_ebx = ebx;
  return params;
}
}  // namespace

TEST_CASE("the default listing has ptdump's columns") {
  const auto trace = Encode({Psb(), Ip(ppt_fup, pt_ipc_sext_48, 0x401000), ModeExec(true, false),
                             PsbEnd(), Tnt8(5, 0b10001), Pip(0xafafa0, false)});
  int status = -1;
  CHECK(Dump(trace, {}, {}, &status) ==
        "0000000000000000  psb\n"
        "0000000000000010  fup        3: 0000000000401000\n"
        "0000000000000017  mode.exec  cs.l\n"
        "0000000000000019  psbend\n"
        "000000000000001b  tnt.8      !...!\n"
        "000000000000001c  pip        afafa0                    cr3  0000000000afafa0\n");
  CHECK(status == 0);
}

TEST_CASE("--no-offset --raw --lastip --exec-mode") {
  const auto trace = Encode({Psb(), Ip(ppt_fup, pt_ipc_full, 0x0a00ccccddddeeee),
                             ModeExec(true, false), PsbEnd(),
                             Ip(ppt_tip, pt_ipc_update_16, 0xdddd),
                             Ip(ppt_tip_pgd, pt_ipc_suppressed, 0)});
  PtdumpOptions options;
  options.show_offset = false;
  options.show_last_ip = true;
  options.show_exec_mode = true;
  const std::string listing = Dump(trace, {}, options);
  CHECK(listing.find("fup        6: 0a00ccccddddeeee       ip   0a00ccccddddeeee\n") !=
        std::string::npos);
  CHECK(listing.find("mode.exec  cs.l                      em   64-bit\n") != std::string::npos);
  CHECK(listing.find("tip        1: ????????????dddd       ip   0a00ccccdddddddd\n") !=
        std::string::npos);
  CHECK(listing.find("tip.pgd    0: ????????????????       ip   <suppressed>\n") !=
        std::string::npos);

  options = {};
  options.show_raw = true;
  const std::string raw = Dump(Encode({Psb(), PsbEnd()}), {}, options);
  CHECK(raw ==
        "0000000000000000  02820282028202820282028202820282  psb\n"
        "0000000000000010  0223                              psbend\n");
}

TEST_CASE("--time --time-delta follows TSC, TMA, MTC and calibrated CYC") {
  const auto trace = Encode({Psb(), PsbEnd(), Tsc(0xa0000), Tma(0x18, 0x8), Mtc(0x2), Cyc(0x100),
                             Mtc(0x3), Cyc(0x100), Mtc(0x4)});
  PtdumpOptions options;
  options.track_time = options.show_time = options.time_as_delta = true;
  CHECK(Dump(trace, Timing(4, 1, 4), options) ==
        "0000000000000000  psb\n"
        "0000000000000010  psbend\n"
        "0000000000000012  tsc        a0000                     tsc  +a0000\n"
        "000000000000001a  tma        18, 8                     tsc  +0\n"
        "0000000000000021  mtc        2                         tsc  +18\n"
        "[23: calibration error: no timing information]\n"
        "[23: error updating time: no calibration]\n"
        "0000000000000023  cyc        100                       tsc  +0\n"
        "0000000000000025  mtc        3                         tsc  +40\n"
        "0000000000000027  cyc        100                       tsc  +40\n"
        "0000000000000029  mtc        4                         tsc  +0\n");
}

TEST_CASE("--tcal shows the cycle ratio; --no-wall-clock allows time without TSC") {
  PtParams params = Timing(4, 1, 4);
  params.nom_freq = 4;
  PtdumpOptions options;
  options.track_time = options.show_tcal = true;
  const std::string tcal = Dump(Encode({Psb(), Cbr(2), PsbEnd(), Mtc(1)}), params, options);
  CHECK(tcal.find("cbr        2                         fcr  2.000\n") != std::string::npos);
  CHECK(tcal.find("mtc        1                         fcr  2.000\n") != std::string::npos);

  options = {};
  options.track_time = options.show_time = true;
  const auto no_tsc = Encode({Psb(), PsbEnd(), Mtc(1), Mtc(3)});
  const std::string strict = Dump(no_tsc, Timing(4, 1, 4), options);
  CHECK(strict.find("[12: error printing time: no timing information]\n") != std::string::npos);
  options.no_wall_clock = true;
  const std::string relative = Dump(no_tsc, Timing(4, 1, 4), options);
  CHECK(relative.find("mtc        3                         tsc  0000000000000080\n") !=
        std::string::npos);
}

TEST_CASE("a decode error is reported and the dump resumes at the next PSB") {
  auto trace = Encode({Psb(), PsbEnd()});
  trace.push_back(0x02);  // an extended opcode that does not exist
  trace.push_back(0x00);
  const auto rest = Encode({Psb(), PsbEnd()});
  trace.insert(trace.end(), rest.begin(), rest.end());
  PtdumpOptions options;
  options.quiet = true;  // only the diagnostics remain
  CHECK(Dump(trace, {}, options) == "[12: error decoding packet: unknown opcode]\n");
}

TEST_CASE("--no-cyc hides CYC and --no-pad hides PAD") {
  const auto trace = Encode({Psb(), PsbEnd(), Pad(), Cyc(0x10)});
  PtdumpOptions options;
  options.no_cyc = true;
  options.no_pad = true;
  CHECK(Dump(trace, {}, options) ==
        "0000000000000000  psb\n"
        "0000000000000010  psbend\n");
}

TEST_CASE("tracking values are cut to ptdump's 16-character column") {
  // TMA places the TSC 0x1ff ticks after a CTC edge, but the TSC was 0: the estimate wraps below
  // zero and the delta needs 17 characters, of which ptdump shows 16.
  const auto trace = Encode({Psb(), PsbEnd(), Tsc(0), Tma(0, 0x1ff), Mtc(1)});
  PtdumpOptions options;
  options.track_time = options.show_time = options.time_as_delta = true;
  const std::string listing = Dump(trace, Timing(0, 1, 1), options);
  CHECK(listing.find("mtc        1                         tsc  +fffffffffffffe0\n") !=
        std::string::npos);
}
