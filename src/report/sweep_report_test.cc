#include "src/report/sweep_report.h"

#include <cstdio>
#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "tests/unit/written_text.h"

using namespace ptprof;

namespace {

std::string Capture(void (*write)(std::FILE*, const SweepReport&), const SweepReport& report) {
  return testing::WrittenText([&](std::FILE* out) { write(out, report); });
}

SweepReport Sample() {
  SweepReport report;
  sweep::SweepRow ok;
  ok.workload = "PiSum";
  ok.backend = "qemu";
  ok.ok = true;
  ok.trace_bytes = 2000;
  ok.insns = 1000;
  ok.traced_seconds = 1e-6;
  ok.seconds_emulated = true;
  ok.packets = {{"psb", 3}, {"tnt.8", 40}};
  ok.has_packets = true;
  ok.has_resolution = true;
  ok.resolution.deltas = 2;
  ok.resolution.median_ns = 12.5;
  ok.resolution.median_insns = 25;
  ok.trf = 0;
  sweep::SweepRow bad;
  bad.workload = "Fib";
  bad.backend = "qemu";
  bad.error = "/x/sweep_fib: missing or not executable";
  report.rows = {ok, bad};
  report.bounds = sweep::TraceSizeBounds(report.rows);
  return report;
}

}  // namespace

TEST_CASE("text report: rows, packets, bounds, failures") {
  std::string text = Capture(WriteSweepText, Sample());
  CHECK(text.find("not measured (emulated)") != std::string::npos);
  CHECK(text.find("2.0000") != std::string::npos);    // bytes per instruction
  CHECK(text.find("2000.0") != std::string::npos);    // MB/s: 2000 bytes in 1 us
  CHECK(text.find("FAILED: /x/sweep_fib: missing") != std::string::npos);
  CHECK(text.find("tnt.8") != std::string::npos);
  CHECK(text.find("trace-size bounds") != std::string::npos);
  CHECK(text.find("1 of 2 rows failed") != std::string::npos);
}

TEST_CASE("CSV has one line per row and a column per packet kind") {
  std::string csv = Capture(WriteSweepCsv, Sample());
  CHECK(csv.find(",packets_psb,packets_tnt.8\n") != std::string::npos);
  CHECK(csv.find("PiSum,qemu,point,4096,off,off,on,1,\"\",2000,1000,2.000000") != std::string::npos);
  CHECK(csv.find(",3,40\n") != std::string::npos);
  CHECK(csv.find("Fib,qemu,point,4096,off,off,on,0,\"/x/sweep_fib: missing") != std::string::npos);
}

TEST_CASE("JSON document: rows, bounds, epsilon_omega") {
  auto doc = nlohmann::json::parse(Capture(WriteSweepJson, Sample()));
  REQUIRE(doc["rows"].size() == 2);
  CHECK(doc["rows"][0]["packets"]["tnt.8"] == 40);
  CHECK(doc["rows"][0]["overhead"] == "not measured (emulated)");
  CHECK(doc["rows"][0]["resolution"]["median_ns"] == 12.5);
  CHECK(doc["rows"][1]["ok"] == false);
  CHECK(doc["bounds"][0]["min_bytes"] == 2000);
  CHECK(doc["epsilon_omega"].empty());
}
