#include "decoders/pt/fast/query_decoder.h"

#include <catch2/catch.hpp>

#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "decoders/pt/flow_testing.h"
#include "decoders/pt/packet_config.h"

using namespace ptprof;
using namespace ptprof::pt;

namespace {

std::vector<uint8_t> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

// What one query returned, in a form both decoders fill the same way.
struct Answer {
  int status = 0;
  int taken = -1;
  uint64_t ip = 0;
  pt_event event{};
  bool has_event = false;
  uint64_t offset = 0;
  int time_status = 0;
  uint64_t tsc = 0;
};

bool SameEvents(const pt_event& a, const pt_event& b) {
  return a.type == b.type && a.ip_suppressed == b.ip_suppressed &&
         a.status_update == b.status_update && a.has_tsc == b.has_tsc &&
         (!a.has_tsc || a.tsc == b.tsc) && a.lost_mtc == b.lost_mtc && a.lost_cyc == b.lost_cyc &&
         std::memcmp(&a.variant, &b.variant, sizeof a.variant) == 0;
}

// Drives libipt's query decoder and ptprof's with the same questions, chosen at random among
// those a block decoder asks (an event when one is pending, else a conditional or an indirect
// branch), resynchronising after errors, and checks every answer, the offset and the time after
// it. Returns the questions asked before the end (or the first answer ptprof does not give).
size_t Compare(std::span<const uint8_t> trace, const PtParams& params, uint32_t seed,
               const std::string& name) {
  pt_config config = MakePtConfig(trace, params);
  pt_query_decoder* reference = pt_qry_alloc_decoder(&config);
  REQUIRE(reference);
  fast::QueryDecoder own(config);
  std::mt19937 random(seed);
  size_t asked = 0;
  int status = 0;
  bool synced = false;
  for (int step = 0; step < 200000; ++step) {
    Answer want, got;
    enum { kSync, kEvent, kCond, kIndirect } question;
    if (!synced) question = kSync;
    else if (status & pts_event_pending) question = random() % 8 ? kEvent : kCond;
    else question = random() % 4 ? kCond : kIndirect;
    switch (question) {
      case kSync:
        want.status = pt_qry_sync_forward(reference, &want.ip);
        got.status = own.SyncForward(&got.ip);
        break;
      case kEvent:
        want.status = pt_qry_event(reference, &want.event, sizeof want.event);
        got.status = own.Event(&got.event);
        want.has_event = got.has_event = true;
        break;
      case kCond:
        want.status = pt_qry_cond_branch(reference, &want.taken);
        got.status = own.CondBranch(&got.taken);
        break;
      case kIndirect:
        want.status = pt_qry_indirect_branch(reference, &want.ip);
        got.status = own.IndirectBranch(&got.ip);
        break;
    }
    if (got.status == fast::kUnsupported) break;  // libipt's alone from here on
    INFO(name << " seed " << seed << " step " << step << " question " << question);
    REQUIRE(got.status == want.status);
    ++asked;
    if (want.status >= 0) {
      if (question == kCond) REQUIRE(got.taken == want.taken);
      if ((question == kIndirect || question == kSync) && !(want.status & pts_ip_suppressed))
        REQUIRE(got.ip == want.ip);
      if (question == kEvent) REQUIRE(SameEvents(got.event, want.event));
      REQUIRE(pt_qry_get_offset(reference, &want.offset) == 0);
      REQUIRE(own.Offset() == want.offset);
      uint32_t lost_mtc = 0, lost_cyc = 0;
      want.time_status = pt_qry_time(reference, &want.tsc, &lost_mtc, &lost_cyc);
      got.time_status = own.Time(&got.tsc);
      REQUIRE((got.time_status < 0) == (want.time_status < 0));
      if (want.time_status >= 0) REQUIRE(got.tsc == want.tsc);
      status = want.status;
      synced = true;
      continue;
    }
    if (want.status == -pte_eos && question == kSync) break;
    // A question asked out of turn is only refused; anything else: resynchronise.
    if (want.status != -pte_bad_query) synced = false;
  }
  pt_qry_free_decoder(reference);
  return asked;
}

// A stream of random but well-formed packets, biased towards what traces hold (PSB+ headers,
// TNT and TIP, timing) with every other kind now and then: the query decoders must agree on
// whatever it makes of them, errors included.
std::vector<uint8_t> RandomPackets(uint32_t seed, size_t count) {
  std::mt19937 random(seed);
  std::vector<uint8_t> out;
  pt_config config;
  pt_config_init(&config);
  std::vector<uint8_t> buffer(64);
  auto emit = [&](pt_packet packet) {
    config.begin = buffer.data();
    config.end = buffer.data() + buffer.size();
    pt_encoder* encoder = pt_alloc_encoder(&config);
    const int size = pt_enc_next(encoder, &packet);
    pt_free_encoder(encoder);
    if (size > 0) out.insert(out.end(), buffer.begin(), buffer.begin() + size);
  };
  const uint64_t base = 0x400000 + (random() % 16) * 0x1000;
  auto ip_packet = [&](pt_packet_type type) {
    pt_packet p{};
    p.type = type;
    static const pt_ip_compression kIpc[] = {pt_ipc_suppressed, pt_ipc_update_16,
                                             pt_ipc_update_32, pt_ipc_sext_48, pt_ipc_update_48,
                                             pt_ipc_full};
    p.payload.ip.ipc = kIpc[random() % 6];
    p.payload.ip.ip = base + random() % 0x4000;
    emit(p);
  };
  auto simple = [&](pt_packet_type type) {
    pt_packet p{};
    p.type = type;
    emit(p);
  };
  for (size_t i = 0; i < count; ++i) {
    const unsigned pick = random() % 100;
    pt_packet p{};
    if (pick < 3) {  // a PSB+ header
      simple(ppt_psb);
      if (random() % 4) {
        p.type = ppt_tsc;
        p.payload.tsc.tsc = 0x1000 * i + random() % 0x100;
        emit(p);
      }
      if (random() % 2) {
        p = {};
        p.type = ppt_cbr;
        p.payload.cbr.ratio = static_cast<uint8_t>(random() % 3 ? 20 + random() % 20 : 0);
        emit(p);
      }
      p = {};
      p.type = ppt_mode;
      p.payload.mode.leaf = pt_mol_exec;
      p.payload.mode.bits.exec.csl = random() % 8 != 0;
      emit(p);
      if (random() % 4 == 0) {
        p = {};
        p.type = ppt_pip;
        p.payload.pip.cr3 = (random() % 64) << 12;
        emit(p);
      }
      if (random() % 8) ip_packet(ppt_fup);
      simple(ppt_psbend);
    } else if (pick < 45) {
      p.type = ppt_tnt_8;
      p.payload.tnt.bit_size = static_cast<uint8_t>(1 + random() % 6);
      p.payload.tnt.payload = random() & ((1u << p.payload.tnt.bit_size) - 1);
      emit(p);
    } else if (pick < 50) {
      p.type = ppt_tnt_64;
      p.payload.tnt.bit_size = static_cast<uint8_t>(1 + random() % 47);
      p.payload.tnt.payload = (uint64_t{random()} << 32 | random()) &
                              ((uint64_t{1} << p.payload.tnt.bit_size) - 1);
      emit(p);
    } else if (pick < 62) {
      ip_packet(ppt_tip);
    } else if (pick < 66) {
      ip_packet(ppt_fup);
    } else if (pick < 69) {
      ip_packet(ppt_tip_pge);
    } else if (pick < 72) {
      ip_packet(ppt_tip_pgd);
    } else if (pick < 78) {
      p.type = ppt_mtc;
      p.payload.mtc.ctc = static_cast<uint8_t>(random());
      emit(p);
    } else if (pick < 84) {
      p.type = ppt_cyc;
      p.payload.cyc.value = random() % 5 ? random() % 64 : random();
      emit(p);
    } else if (pick < 86) {
      p.type = ppt_tsc;
      p.payload.tsc.tsc = 0x1000 * i;
      emit(p);
    } else if (pick < 88) {
      p.type = ppt_tma;
      p.payload.tma.ctc = static_cast<uint16_t>(random());
      p.payload.tma.fc = static_cast<uint16_t>(random() % 512);
      emit(p);
    } else if (pick < 90) {
      p.type = ppt_mode;
      p.payload.mode.leaf = random() % 2 ? pt_mol_exec : pt_mol_tsx;
      p.payload.mode.bits.tsx.intx = random() % 2;
      p.payload.mode.bits.tsx.abrt = random() % 4 == 0;
      emit(p);
    } else if (pick < 92) {
      simple(ppt_ovf);
    } else if (pick < 94) {
      p.type = ppt_cbr;
      p.payload.cbr.ratio = static_cast<uint8_t>(1 + random() % 40);
      emit(p);
    } else if (pick < 95) {
      p.type = ppt_pip;
      p.payload.pip.cr3 = (random() % 64) << 12;
      emit(p);
    } else if (pick < 96) {
      simple(ppt_stop);
    } else if (pick < 97) {
      p.type = ppt_mnt;
      p.payload.mnt.payload = random();
      emit(p);
    } else if (pick < 98) {
      p.type = random() % 2 ? ppt_pwre : ppt_pwrx;
      emit(p);
    } else {
      simple(ppt_pad);
    }
  }
  return out;
}

PtParams ParamsOf(const std::string& command) {
  PtParams params;
  std::istringstream words(command);
  std::string word, value;
  while (words >> word) {
    if (word == "--cpu" && words >> value) REQUIRE(ParseCpu(value, "--cpu", params));
    else if (word == "--mtc-freq" && words >> value) params.mtc_freq = static_cast<uint8_t>(std::stoul(value, nullptr, 0));
    else if (word == "--nom-freq" && words >> value) params.nom_freq = static_cast<uint8_t>(std::stoul(value, nullptr, 0));
    else if (word == "--cpuid-0x15.eax" && words >> value) params.cpuid_0x15_eax = static_cast<uint32_t>(std::stoul(value, nullptr, 0));
    else if (word == "--cpuid-0x15.ebx" && words >> value) params.cpuid_0x15_ebx = static_cast<uint32_t>(std::stoul(value, nullptr, 0));
  }
  return params;
}

}  // namespace

TEST_CASE("The query decoder answers as libipt's on the sample trace and on damaged copies",
          "[query_decoder]") {
  const char* root = std::getenv("SOURCE_ROOT");
  REQUIRE(root);
  const std::vector<uint8_t> sample = ReadFile(std::string(root) + "/traces/sample/sample.pt");
  REQUIRE(sample.size() > 100);
  PtParams params;
  params.nom_freq = 20;
  size_t asked = 0;
  for (uint32_t seed = 1; seed <= 4; ++seed) asked += Compare(sample, params, seed, "sample");
  CHECK(asked > 20);
  // Flipped bytes and cut ends: errors, resynchronisation, truncated packets.
  std::mt19937 random(7);
  for (int copy = 0; copy < 40; ++copy) {
    std::vector<uint8_t> damaged = sample;
    for (int flip = 0; flip < 1 + copy % 6; ++flip)
      damaged[random() % damaged.size()] ^= static_cast<uint8_t>(1u << (random() % 8));
    damaged.resize(damaged.size() - random() % 200);
    Compare(damaged, params, static_cast<uint32_t>(copy), "damaged sample " + std::to_string(copy));
  }
  const std::vector<uint8_t> encoded = testing::SampleTrace();
  CHECK(Compare(encoded, PtParams{}, 1, "encoded sample") > 3);
}

TEST_CASE("The query decoder answers as libipt's on random packets", "[query_decoder]") {
  PtParams timed;
  timed.mtc_freq = 3;
  timed.nom_freq = 20;
  timed.cpuid_0x15_eax = 2;
  timed.cpuid_0x15_ebx = 200;
  size_t asked = 0;
  for (uint32_t seed = 1; seed <= 60; ++seed) {
    const std::vector<uint8_t> trace = RandomPackets(seed, 3000);
    asked += Compare(trace, seed % 2 ? timed : PtParams{}, seed, "random " + std::to_string(seed));
  }
  CHECK(asked > 20000);
}

TEST_CASE("Taking a whole TNT-8 packet at once answers as reading it, then taking its bits",
          "[query_decoder]") {
  PtParams timed;
  timed.mtc_freq = 3;
  timed.nom_freq = 20;
  timed.cpuid_0x15_eax = 2;
  timed.cpuid_0x15_ebx = 200;
  size_t whole = 0, pending = 0, failed = 0;
  for (uint32_t seed = 1; seed <= 40; ++seed) {
    const std::vector<uint8_t> trace = RandomPackets(seed, 3000);
    const pt_config config = MakePtConfig(trace, seed % 2 ? timed : PtParams{});
    fast::QueryDecoder stepwise(config), at_once(config);
    std::mt19937 random(seed);
    bool synced = false;
    for (int step = 0; step < 20000; ++step) {
      INFO("seed " << seed << " step " << step);
      int want = 0, got = 0;
      uint64_t want_ip = 0, got_ip = 0;
      if (!synced) {
        want = stepwise.SyncForward(&want_ip);
        got = at_once.SyncForward(&got_ip);
      } else if (!stepwise.HasTntBits() && stepwise.Tnt8Next()) {
        REQUIRE(!at_once.HasTntBits());
        REQUIRE(at_once.Tnt8Next());
        // As the steady loop reads it when a run takes all its bits, against RefillTnt, then
        // the bits taken when no status follows them.
        want = stepwise.RefillTnt();
        if (want == 0) want = stepwise.StatusAfterTaking(stepwise.PendingBits()) ? 1 : 0;
        if (want == 0) REQUIRE(stepwise.TakeTntBits(stepwise.PendingBits()) == 0);
        got = at_once.TakeWholeTnt8();
        ++(want == 0 ? whole : want > 0 ? pending : failed);
      } else if (random() % 3) {
        int want_taken = -1, got_taken = -1;
        want = stepwise.CondBranch(&want_taken);
        got = at_once.CondBranch(&got_taken);
        REQUIRE(got_taken == want_taken);
      } else {
        want = stepwise.IndirectBranch(&want_ip);
        got = at_once.IndirectBranch(&got_ip);
      }
      if (got == fast::kUnsupported) break;
      REQUIRE(got == want);
      REQUIRE(got_ip == want_ip);
      REQUIRE(at_once.Offset() == stepwise.Offset());
      REQUIRE(at_once.HasTntBits() == stepwise.HasTntBits());
      REQUIRE(at_once.PendingBits() == stepwise.PendingBits());
      // The values of the bits pending (those taken may differ: nothing reads them).
      const uint64_t mask = (uint64_t{1} << stepwise.PendingBits()) - 1;
      REQUIRE((at_once.PendingBitValues() & mask) == (stepwise.PendingBitValues() & mask));
      uint64_t want_tsc = 0, got_tsc = 0;
      REQUIRE(at_once.Time(&got_tsc) == stepwise.Time(&want_tsc));
      REQUIRE(got_tsc == want_tsc);
      if (want == -pte_eos && !synced) break;
      if (want < 0) synced = false;
      else synced = true;
      if (want >= 0 && (want & pts_event_pending)) {
        pt_event want_event{}, got_event{};
        want = stepwise.Event(&want_event);
        got = at_once.Event(&got_event);
        REQUIRE(got == want);
        REQUIRE(SameEvents(got_event, want_event));
        if (want < 0) synced = false;
      }
    }
  }
  // Each answer came up: taken whole, left pending before a status, and failed.
  CHECK(whole > 1000);
  CHECK(pending > 100);
  CHECK(failed > 0);
}

TEST_CASE("The query decoder answers as libipt's on real hardware traces", "[query_decoder]") {
  const char* root = std::getenv("SOURCE_ROOT");
  REQUIRE(root);
  const std::string shared = std::string(root) + "/../shared/testdata/";
  struct Real {
    std::string path;
    std::string options;
  };
  const std::vector<Real> traces = {
      {"dynamorio/clients/drcachesim/drpt2trace/test_simple.raw/pt.bin",
       "--cpu 6/85/4 --mtc-freq 3 --nom-freq 37 --cpuid-0x15.eax 2 --cpuid-0x15.ebx 308"},
      {"perf_data_converter/aux-extracted/perf.data.intel_pt-4.14.idx0.cpu0.bin",
       "--cpu 6/78/3 --mtc-freq 3 --nom-freq 12 --cpuid-0x15.eax 2 --cpuid-0x15.ebx 100"},
      {"perf_data_converter/aux-extracted/perf.data.intel_pt-4.14.idx3.cpu3.bin",
       "--cpu 6/78/3 --mtc-freq 3 --nom-freq 12 --cpuid-0x15.eax 2 --cpuid-0x15.ebx 100"},
  };
  std::mt19937 random(11);
  size_t found = 0;
  for (const Real& real : traces) {
    const std::vector<uint8_t> trace = ReadFile(shared + real.path);
    if (trace.empty()) continue;
    ++found;
    const PtParams params = ParamsOf(real.options);
    for (uint32_t seed = 1; seed <= 4; ++seed) Compare(trace, params, seed, real.path);
    for (int copy = 0; copy < 20; ++copy) {
      std::vector<uint8_t> damaged = trace;
      for (int flip = 0; flip < 1 + copy % 4; ++flip)
        damaged[random() % damaged.size()] ^= static_cast<uint8_t>(1u << (random() % 8));
      Compare(damaged, params, static_cast<uint32_t>(copy), real.path + " damaged");
    }
  }
  if (!found) WARN("no real traces in ../shared/testdata: skipped");
}

TEST_CASE("The query decoder answers as libipt's on libipt's own tests", "[query_decoder]") {
  const char* root = std::getenv("SOURCE_ROOT");
  REQUIRE(root);
  const std::string shared = std::string(root) + "/../shared/testdata/libipt/";
  std::ifstream manifest(shared + "generated/MANIFEST.tsv");
  if (!manifest) {
    WARN("no ../shared/testdata/libipt: skipped");
    return;
  }
  std::string line;
  std::getline(manifest, line);  // header
  size_t traces = 0;
  while (std::getline(manifest, line)) {
    std::vector<std::string> columns;
    std::istringstream fields(line);
    for (std::string field; std::getline(fields, field, '\t');) columns.push_back(field);
    if (columns.size() < 8) continue;
    const std::vector<uint8_t> trace = ReadFile(shared + columns[2] + "/" + columns[4]);
    if (trace.empty()) continue;
    const PtParams params = ParamsOf(columns[7]);
    for (uint32_t seed = 1; seed <= 3; ++seed) Compare(trace, params, seed, columns[0]);
    ++traces;
  }
  CHECK(traces > 100);
}
