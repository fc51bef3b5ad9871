#pragma once
// BranchSampleWriter writes the taken branches of a decoded flow (the rule of
// src/model/taken_branches.h) as `ptprof decode --branches` lists them: pseudo-samples of `depth`
// consecutive taken branches of one thread (0: one sample per unbroken run), numbered in the order
// they are written. A sample is written when it is full or when its thread's run breaks, and at
// the end the samples still open, by thread. Its header names the thread and the process, cpu,
// time and trace offset of the block its first branch left. Lines: src/report/branch_text.h.
//
// In parts (src/model/parted_sink.h) a part formats its records' lines on its own thread, each
// thread's in order, and logs in stream order what happened: a record, a break, its first block
// of a thread. What a part cannot know is the fold's to decide: the branch pending into its first
// block of a thread, how full that thread's sample already is, and the samples' numbers. The fold
// replays the log against the real threads and writes each sample as it fills or breaks (the
// lines carried over from earlier parts, then the part's own); the lines of a sample still open at
// the part's end are carried over. The bytes are those of one writer, however the stream was cut.
#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "src/model/parted_sink.h"
#include "src/model/taken_branches.h"
#include "src/report/line_cache.h"
#include "src/report/spare_pool.h"

namespace ptprof {

class BranchSampleWriter : public PartedSink {
 public:
  struct Options {
    bool jsonl = false;
    uint32_t depth = 16;  // records per sample; 0: one sample per unbroken run
    // "main+0x13" for an address, or "" (text only; in parts, called on several threads at once).
    std::function<std::string(uint64_t)> symbolize;
  };
  BranchSampleWriter(std::FILE* out, Options options);
  ~BranchSampleWriter() override { Flush(); }

  void OnEvent(const TraceEvent& event) override;
  void OnBlocks(const BlockBatch& batch) override;
  // Writes the samples still open, by thread, and flushes.
  void OnEnd() override;

  std::unique_ptr<EventSink> NewPart() const override;
  void Fold(std::unique_ptr<EventSink> part) override;
  // Parts of 32 KiB of trace, as the event writer's: their lines wait in memory until the fold.
  uint64_t PartBytes() const override { return 32u << 10; }

  uint64_t samples() const { return samples_; }
  uint64_t records() const { return records_; }

  // Where a branch was taken: the block that ended in it.
  struct Site {
    int32_t pid = -1;
    int32_t cpu = -1;
    uint64_t time_ns = 0;  // 0: unknown
    uint64_t offset = 0;
  };
  // Record lines in order (for JSONL, each record's head): line i is bytes[Begin(i), ends[i]).
  struct Lines {
    std::string bytes;
    std::vector<uint64_t> ends;
    size_t size() const { return ends.size(); }
    uint64_t Begin(size_t i) const { return i ? ends[i - 1] : 0; }
    void Close() { ends.push_back(bytes.size()); }
    void clear() {
      bytes.clear();
      ends.clear();
    }
  };

  // A part's records of one thread: their lines and the site each was taken at. Kept for the
  // next parts once folded, so that a part's lines grow into memory already in use and its
  // cache of lines (by from and to: a line is a function of the branch) is warm.
  struct PartRecords {
    Lines lines;
    std::vector<Site> sites;
    LineCache cache;
  };

 private:
  friend class BranchSamplePart;
  friend struct BranchWalk;
  struct Thread {
    int64_t key = 0;
    bool known = true;     // what was before is this writer's own
    PendingBranch branch;
    Site site;             // of the block the pending branch leaves
    Site head;             // of the open sample's first record
    uint64_t count = 0;    // records in the open sample
    Lines carried;         // the open sample's lines this writer holds
  };

  Thread& ThreadOf(int64_t key);
  void First(Thread&, uint64_t) {}  // never: this writer's threads know what came before
  // A record taken at `site` joins t's open sample; whether the sample is full.
  bool Counted(Thread& t, const Site& site);
  // Directly: the record {from -> to}, taken at t.site, joins t's open sample.
  void Record(Thread& t, uint64_t from, uint64_t to);
  // t's open sample is written: the lines it carried, then `more`'s lines [begin, end).
  void Write(Thread& t, const Lines* more = nullptr, size_t begin = 0, size_t end = 0);
  void Break(Thread& t) {
    if (t.count) Write(t);
  }
  // The record's line (text) or its JSON head, closed in `lines`.
  void AppendLine(LineCache& cache, Lines& lines, uint64_t from, uint64_t to) const;
  void Flush();

  std::FILE* out_;
  Options options_;
  std::string buffer_;  // written, waiting for a flush
  LineCache cache_;     // for the records taken directly
  std::unordered_map<int64_t, Thread> threads_;
  Thread* last_ = nullptr;
  uint64_t samples_ = 0, records_ = 0;
  // Parts take their records' storage on their threads.
  mutable SparePool<std::unique_ptr<PartRecords>> spare_;
};

}  // namespace ptprof
