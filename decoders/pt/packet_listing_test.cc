#include "decoders/pt/packet_listing.h"

#include <catch2/catch.hpp>

#include "decoders/pt/packet_test_encoder.h"

using namespace ptprof::pt;
using namespace ptprof::pt::testing;

namespace {
std::vector<std::string> Lines(const std::vector<uint8_t>& trace, ListingFormat format,
                               ListingSummary* summary = nullptr) {
  std::vector<std::string> lines;
  PtParams params;
  params.mtc_freq = 4;
  params.cpuid_0x15_eax = 1;
  params.cpuid_0x15_ebx = 4;
  PacketListing listing(params, format, [&](std::string_view text) {
    REQUIRE(text.back() == '\n');
    lines.emplace_back(text.substr(0, text.size() - 1));
  });
  auto result = listing.List(trace);
  REQUIRE(result);
  if (summary) *summary = *result;
  return lines;
}
}  // namespace

TEST_CASE("JSONL: one record per packet with the full IP and the estimated TSC") {
  const auto trace = Encode({Psb(), Ip(ppt_fup, pt_ipc_sext_48, 0x401000), PsbEnd(),
                             Ip(ppt_tip, pt_ipc_update_16, 0x2000), Tsc(0xa0000),
                             Tma(0x18, 0x8), Mtc(0x2)});
  const auto lines = Lines(trace, ListingFormat::kJsonl);
  REQUIRE(lines.size() == 7);
  CHECK(lines[0] == R"({"offset":0,"size":16,"packet":"psb","payload":""})");
  CHECK(lines[1] ==
        R"({"offset":16,"size":7,"packet":"fup","payload":"3: 0000000000401000","ip":"0x401000"})");
  CHECK(lines[3] ==
        R"({"offset":25,"size":3,"packet":"tip","payload":"1: ????????????2000","ip":"0x402000"})");
  CHECK(lines[4] == R"({"offset":28,"size":8,"packet":"tsc","payload":"a0000","tsc":655360})");
  CHECK(lines[6] == R"({"offset":43,"size":2,"packet":"mtc","payload":"2","tsc":655384})");
}

TEST_CASE("damage becomes a gap record and listing resumes at the next PSB") {
  auto trace = Encode({Psb(), PsbEnd()});
  trace.push_back(0x02);  // an extended opcode that does not exist
  trace.push_back(0x00);
  const auto rest = Encode({Psb(), PsbEnd()});
  trace.insert(trace.end(), rest.begin(), rest.end());
  ListingSummary summary;
  const auto lines = Lines(trace, ListingFormat::kJsonl, &summary);
  REQUIRE(lines.size() == 5);
  CHECK(lines[2] ==
        R"({"offset":18,"event":"gap","reason":"desync","detail":"unknown opcode"})");
  CHECK(lines[3] == R"({"offset":20,"size":16,"packet":"psb","payload":""})");
  CHECK(summary.packets == 4);
  CHECK(summary.gaps == 1);
  CHECK(summary.skipped_bytes == 2);

  const auto text = Lines(trace, ListingFormat::kText);
  CHECK(text[2] == "0000000000000012  [gap: desync: unknown opcode]");
}

TEST_CASE("a packet cut off by the end of the trace is a truncated gap after the last packet") {
  auto trace = Encode({Psb(), PsbEnd(), Tsc(0xa0000)});
  trace.resize(trace.size() - 3);  // the TSC packet (8 bytes) loses its last 3
  ListingSummary summary;
  const auto lines = Lines(trace, ListingFormat::kJsonl, &summary);
  REQUIRE(lines.size() == 3);
  CHECK(lines[1] == R"({"offset":16,"size":2,"packet":"psbend","payload":""})");
  CHECK(lines[2] == R"({"offset":18,"event":"gap","reason":"truncated",)"
                    R"x("detail":"the trace ends inside this packet (5 bytes of it present)"})x");
  CHECK(summary.packets == 2);
  CHECK(summary.gaps == 1);
  CHECK(summary.truncated);
  CHECK(summary.truncated_at == 18);
  CHECK(summary.skipped_bytes == 5);

  const auto text = Lines(trace, ListingFormat::kText);
  CHECK(text.back() ==
        "0000000000000012  [gap: truncated: the trace ends inside this packet (5 bytes of it "
        "present)]");
}

TEST_CASE("a trace that ends on a packet boundary has no truncation gap") {
  const auto trace = Encode({Psb(), PsbEnd(), Tsc(0xa0000)});
  ListingSummary summary;
  const auto lines = Lines(trace, ListingFormat::kJsonl, &summary);
  CHECK(lines.size() == 3);
  CHECK(summary.gaps == 0);
  CHECK_FALSE(summary.truncated);
}

TEST_CASE("text lines show the payload and what tracking adds") {
  const auto trace = Encode({Psb(), Ip(ppt_fup, pt_ipc_sext_48, 0x401000), PsbEnd()});
  const auto lines = Lines(trace, ListingFormat::kText);
  REQUIRE(lines.size() == 3);
  CHECK(lines[0] == "0000000000000000  psb");
  CHECK(lines[1] ==
        "0000000000000010  fup        3: 0000000000401000       ip  0000000000401000");
}

TEST_CASE("PIP and VMCS records carry their value as a field") {
  ListedPacket listed;
  listed.offset = 38;
  listed.packet.kind = PacketKind::kPip;
  listed.packet.size = 8;
  listed.packet.cr3 = 0x3fd434000;
  CHECK(PacketJson(listed) ==
        R"({"offset":38,"size":8,"packet":"pip","payload":"3fd434000","cr3":"0x3fd434000"})");
}

TEST_CASE("a packet's line appended after other text leaves that text alone") {
  ListedPacket listed;
  listed.offset = 0x40;
  listed.packet.kind = PacketKind::kPsbEnd;
  listed.packet.size = 2;
  std::string out = "before ";  // ends in a space the line's trimming must not take
  AppendPacketTextLine(out, listed);
  CHECK(out == "before 0000000000000040  psbend");
  listed.packet.kind = PacketKind::kVmcs;
  listed.packet.size = 7;
  listed.packet.vmcs_base = 0xab000;
  listed.has_tsc = true;
  listed.tsc = 12345;
  out = "x";
  AppendPacketJson(out, listed);
  CHECK(out == R"(x{"offset":64,"size":7,"packet":"vmcs","payload":"ab000","vmcs":"0xab000","tsc":12345})");
  out.clear();
  AppendPacketTextLine(out, listed);
  CHECK(out == "0000000000000040  vmcs       ab000                     tsc 0000000000003039");
}

TEST_CASE("a trace without PSB is an error naming the offset") {
  PacketListing listing(PtParams{}, ListingFormat::kText, [](std::string_view) {});
  const std::vector<uint8_t> zeros(32, 0);
  auto result = listing.List(zeros);
  REQUIRE(!result);
  CHECK(result.error().message == "offset 0x0: no PSB found");
}
