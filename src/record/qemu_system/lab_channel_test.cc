#include "src/record/qemu_system/lab_channel.h"

#include <zlib.h>

#include <catch2/catch.hpp>

using namespace ptprof::record;

namespace {
std::vector<uint8_t> Gzip(const std::string& text) {
  z_stream z{};
  REQUIRE(deflateInit2(&z, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) == Z_OK);
  std::vector<uint8_t> out(text.size() + 128);
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  z.avail_in = static_cast<uInt>(text.size());
  z.next_out = out.data();
  z.avail_out = static_cast<uInt>(out.size());
  REQUIRE(deflate(&z, Z_FINISH) == Z_STREAM_END);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}
std::vector<uint8_t> Bytes(const std::string& text) { return {text.begin(), text.end()}; }
}  // namespace

TEST_CASE("lab channel: values and framed files, gzip or not, \\r\\n tolerated") {
  const std::string kallsyms = "ffffffff81c00080 T entry_SYSCALL_64\n";
  auto gz = Gzip(kallsyms);
  std::vector<uint8_t> bytes = Bytes("ptprof-lab 1\r\nuname 6.1.0-56-cloud-amd64\n");
  auto header = Bytes("file kallsyms.gz " + std::to_string(gz.size()) + "\n");
  bytes.insert(bytes.end(), header.begin(), header.end());
  bytes.insert(bytes.end(), gz.begin(), gz.end());
  auto rest = Bytes("file modules 0\nworkload_pid 89 comm lab_syscalls\nworkload_exit 0\n");
  bytes.insert(bytes.end(), rest.begin(), rest.end());
  auto channel = ParseLabChannel(bytes, "x.channel");
  REQUIRE(channel);
  CHECK(channel->Value("uname") == "6.1.0-56-cloud-amd64");
  CHECK(channel->Value("workload_pid") == "89 comm lab_syscalls");
  CHECK(channel->Value("workload_exit") == "0");
  CHECK(channel->files["kallsyms"] == Bytes(kallsyms));
  CHECK(channel->files["modules"].empty());
  CHECK_FALSE(channel->truncated);
}

TEST_CASE("lab channel: a file cut short is kept and flagged; corrupt gzip is an error") {
  auto cut = ParseLabChannel(Bytes("file modules 100\nabc"), "x.channel");
  REQUIRE(cut);
  CHECK(cut->truncated);
  CHECK(cut->files["modules"] == Bytes("abc"));
  auto bad = ParseLabChannel(Bytes("file kallsyms.gz 4\nabcd"), "x.channel");
  REQUIRE_FALSE(bad);
  CHECK(bad.error().message.find("x.channel: file 'kallsyms.gz': offset") == 0);
  auto empty = ParseLabChannel({}, "x.channel");
  REQUIRE(empty);
  CHECK(empty->values.empty());
}
