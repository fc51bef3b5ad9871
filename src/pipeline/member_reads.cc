#include "src/pipeline/member_reads.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <filesystem>
#include <numeric>
#include <thread>

#include "src/model/worker_threads.h"

namespace ptprof {

namespace {

Status ReadOne(const archive::ArchiveReader& reader, MemberRead& read) {
  const archive::MemberInfo& member = *read.member;
  switch (read.to) {
    case MemberRead::To::kFile:
      return reader.ReadToFile(member, read.file);
    case MemberRead::To::kMappedFile: {
      if (auto st = reader.ReadToFile(member, read.file); !st) return st;
      auto mapped = SharedBytes::MapFile(read.file);
      if (!mapped) return tl::unexpected(mapped.error());
      // The mapping keeps the data; the name can go (nothing else reads the file).
      std::filesystem::remove(read.file);
      read.shared = std::move(*mapped);
      return {};
    }
    case MemberRead::To::kShared: {
      auto shared = reader.ReadShared(member);
      if (!shared) return tl::unexpected(shared.error());
      read.shared = std::move(*shared);
      return {};
    }
    case MemberRead::To::kMemory: {
      auto bytes = reader.Read(member);
      if (!bytes) return tl::unexpected(bytes.error());
      read.bytes = std::move(*bytes);
      return {};
    }
  }
  return {};
}

}  // namespace

Status ReadMembers(const archive::ArchiveReader& reader, std::vector<MemberRead>& reads,
                   unsigned jobs) {
  // Largest first, so that the threads end together rather than one finishing a large member
  // alone.
  std::vector<size_t> order(reads.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return reads[a].member->packed_size > reads[b].member->packed_size;
  });
  std::vector<Status> status(reads.size());
  std::vector<std::exception_ptr> thrown(reads.size());
  std::atomic<size_t> next{0};
  auto work = [&](unsigned) {
    for (size_t k = next.fetch_add(1); k < order.size(); k = next.fetch_add(1)) {
      const size_t i = order[k];
      thrown[i] = Caught([&] { status[i] = ReadOne(reader, reads[i]); });
    }
  };
  std::vector<std::thread> helpers;
  const size_t more =
      std::min<size_t>(std::max(jobs, 1u) - 1, reads.empty() ? 0 : reads.size() - 1);
  StartThreads(helpers, static_cast<unsigned>(more), work);  // those refused leave it to this one
  work(0);
  for (std::thread& helper : helpers) helper.join();
  for (size_t i = 0; i < reads.size(); ++i) {
    if (thrown[i]) std::rethrow_exception(thrown[i]);
    if (!status[i]) return status[i];
  }
  return {};
}

}  // namespace ptprof
