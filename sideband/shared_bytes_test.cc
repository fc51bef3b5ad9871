#include "sideband/shared_bytes.h"

#include <cstdio>
#include <fstream>
#include <string>
#include <thread>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "tests/unit/child_process.h"

using namespace ptprof;

namespace {

std::string TempFile(const std::string& contents) {
  char name[] = "/tmp/ptprof_shared_bytes_XXXXXX";
  const int fd = mkstemp(name);
  REQUIRE(fd >= 0);
  close(fd);
  { std::ofstream(name, std::ios::binary) << contents; }
  return name;
}

}  // namespace

TEST_CASE("a regular file is mapped, not read, and its slices share the mapping") {
  const std::string path = TempFile("0123456789");
  auto bytes = SharedBytes::MapFile(path);
  REQUIRE(bytes);
  CHECK(bytes->mapped());
  CHECK(bytes->size() == 10);
  CHECK(std::string(bytes->begin(), bytes->end()) == "0123456789");
  SharedBytes middle = bytes->Slice(3, 4);
  CHECK(std::string(middle.begin(), middle.end()) == "3456");
  CHECK(middle.mapped());
  // The slice keeps the mapping alive after the whole is gone.
  bytes = SharedBytes();
  std::remove(path.c_str());
  CHECK(middle.ToVector() == std::vector<uint8_t>{'3', '4', '5', '6'});
  CHECK(middle == std::vector<uint8_t>{'3', '4', '5', '6'});
  CHECK(middle.span().size() == 4);
}

TEST_CASE("owned bytes, empty files, pipes and errors") {
  SharedBytes owned(std::vector<uint8_t>{1, 2, 3});
  CHECK(!owned.mapped());
  CHECK(owned.Slice(1, 2) == std::vector<uint8_t>{2, 3});
  CHECK(owned == SharedBytes(std::vector<uint8_t>{1, 2, 3}));
  CHECK(!(owned == SharedBytes(std::vector<uint8_t>{1, 2})));
  CHECK(SharedBytes().empty());

  const std::string empty = TempFile("");
  auto none = SharedBytes::MapFile(empty);
  REQUIRE(none);
  CHECK(none->empty());
  std::remove(empty.c_str());

  char fifo[] = "/tmp/ptprof_shared_bytes_fifoXXXXXX";
  REQUIRE(mkdtemp(fifo));
  const std::string pipe = std::string(fifo) + "/p";
  REQUIRE(mkfifo(pipe.c_str(), 0600) == 0);
  // A writer on the other end, so that opening the FIFO for reading does not block forever.
  FILE* writer = nullptr;
  std::thread feed([&] {
    writer = std::fopen(pipe.c_str(), "wb");
    std::fputs("piped", writer);
    std::fclose(writer);
  });
  auto piped = SharedBytes::MapFile(pipe);
  feed.join();
  std::remove(pipe.c_str());
  rmdir(fifo);
  REQUIRE(piped);
  CHECK(!piped->mapped());
  CHECK(std::string(piped->begin(), piped->end()) == "piped");

  auto missing = SharedBytes::MapFile("/nonexistent/ptprof/trace.pt");
  REQUIRE(!missing);
  CHECK(missing.error().message == "/nonexistent/ptprof/trace.pt: cannot open: No such file or directory");
  auto directory = SharedBytes::MapFile("/tmp");
  REQUIRE(!directory);
  CHECK(directory.error().message == "/tmp: is a directory, expected a file");
}

TEST_CASE("Filled bytes are what the filler wrote; its error comes back") {
  const size_t size = 3 * 1024 * 1024 + 5;  // over one huge page, not a whole number of them
  auto filled = SharedBytes::Filled(size, [&](uint8_t* out) -> Status {
    for (size_t i = 0; i < size; ++i) out[i] = static_cast<uint8_t>(i * 13);
    return {};
  });
  REQUIRE(filled);
  REQUIRE(filled->size() == size);
  CHECK_FALSE(filled->mapped());
  CHECK((*filled)[size - 1] == static_cast<uint8_t>((size - 1) * 13));
  const SharedBytes slice = filled->Slice(size - 5, 5);
  filled = SharedBytes();  // the slice keeps the memory
  CHECK(slice[4] == static_cast<uint8_t>((size - 1) * 13));
  auto failed = SharedBytes::Filled(10, [](uint8_t*) -> Status { return Fail("no"); });
  REQUIRE_FALSE(failed);
  CHECK(failed.error().message == "no");
  auto empty = SharedBytes::Filled(0, [](uint8_t*) -> Status { return {}; });
  REQUIRE(empty);
  CHECK(empty->empty());
}

TEST_CASE("a mapped file that shrinks under the reader is one line naming it, exit 1") {
  const std::string path = TempFile(std::string(3 * 4096, 'x'));
  auto bytes = SharedBytes::MapFile(path);
  REQUIRE(bytes);
  REQUIRE(bytes->mapped());
  const ptprof::testing::ChildRun run = ptprof::testing::RunInChild([&](int err) {
    dup2(err, STDERR_FILENO);
    if (truncate(path.c_str(), 100) != 0) _exit(9);
    volatile uint8_t sink = (*bytes)[2 * 4096 + 5];  // past the new end: SIGBUS
    (void)sink;
  });
  std::remove(path.c_str());
  CHECK(run.Exited(1));
  const std::string& message = run.output;
  CHECK(message == "ptprof: " + path + ": offset 0x2005: the file was truncated while it was being read\n");
}
