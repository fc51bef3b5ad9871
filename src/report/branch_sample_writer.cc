#include "src/report/branch_sample_writer.h"

#include <algorithm>
#include <charconv>
#include <cstring>

#include "src/model/block_batch.h"
#include "src/report/branch_text.h"

namespace ptprof {

// The rule of taken_branches.h over one sink's threads, for the writer (whose threads know what
// came before) and for a part (whose threads learn it at the fold). `S` gives ThreadOf(key),
// First(t, first_ip) (t's first event in a part is a block), Record(t, from, to) and Break(t).
struct BranchWalk {
  template <class S, class SiteOf>
  static void Block(S& sink, int64_t key, uint64_t first_ip, uint64_t last_ip, BlockEnd end,
                    SiteOf&& site_of) {
    auto& t = sink.ThreadOf(key);
    if (!t.known) {
      t.known = true;
      sink.First(t, first_ip);
    }
    const BlockEndRole role = t.branch.Follow(first_ip, last_ip, end, [&](uint64_t from, uint64_t to) {
      sink.Record(t, from, to);
    });
    if (role == BlockEndRole::kTaken) t.site = site_of();
    else if (role == BlockEndRole::kBreaks) sink.Break(t);
  }

  template <class S>
  static void Event(S& sink, const TraceEvent& event) {
    const EventHeader& h = event.header;
    const int64_t key = FlowThread(h.cpu, h.tid);
    if (const auto* block = std::get_if<ExecBlock>(&event.body)) {
      Block(sink, key, block->first_ip, block->last_ip, block->end, [&] {
        return BranchSampleWriter::Site{h.pid, h.cpu, h.time_ns == kUnknownTime ? 0 : h.time_ns, h.offset};
      });
      return;
    }
    if (!BreaksBranchRun(event)) return;
    auto& t = sink.ThreadOf(key);
    t.known = true;
    t.branch.taken = false;
    sink.Break(t);
  }

  template <class S>
  static void Batch(S& sink, const BlockBatch& batch) {
    const int64_t key = FlowThread(batch.cpu, batch.tid);
    for (size_t i = 0; i < batch.blocks.size(); ++i) {
      const PackedEvent& b = batch.blocks[i];
      Block(sink, key, b.first_ip_or_index, b.first_ip_or_index + b.span, static_cast<BlockEnd>(b.end), [&] {
        const uint64_t time_ns = batch.TimeNs(i);
        return BranchSampleWriter::Site{batch.pid, batch.cpu, time_ns == kUnknownTime ? 0 : time_ns, b.offset};
      });
    }
  }
};

// A part: its records' lines per thread, with the site each was taken at, and the log of what
// happened in stream order.
class BranchSamplePart : public EventSink {
 public:
  explicit BranchSamplePart(const BranchSampleWriter& writer) : writer_(writer) {}

  void OnEvent(const TraceEvent& event) override { BranchWalk::Event(*this, event); }
  void OnBlocks(const BlockBatch& batch) override { BranchWalk::Batch(*this, batch); }

  enum Kind : uint32_t { kRecord, kBreak, kFirst };
  struct Thread {
    int64_t key = 0;
    uint32_t index = 0;
    bool known = false;  // the part met a block or break of this thread
    uint64_t first_ip = 0;
    PendingBranch branch;
    BranchSampleWriter::Site site;
    std::unique_ptr<BranchSampleWriter::PartRecords> records;
  };

  Thread& ThreadOf(int64_t key) {
    if (last_ && last_->key == key) return *last_;
    auto [it, added] = index_.try_emplace(key, static_cast<uint32_t>(threads_.size()));
    if (added) {
      threads_.push_back(std::make_unique<Thread>());
      threads_.back()->key = key;
      threads_.back()->index = it->second;
      threads_.back()->records =
          writer_.spare_.Take([] { return std::make_unique<BranchSampleWriter::PartRecords>(); });
    }
    return *(last_ = threads_[it->second].get());
  }
  void First(Thread& t, uint64_t first_ip) {
    t.first_ip = first_ip;
    Log(t, kFirst);
  }
  void Record(Thread& t, uint64_t from, uint64_t to) {
    writer_.AppendLine(t.records->cache, t.records->lines, from, to);
    t.records->sites.push_back(t.site);
    Log(t, kRecord);
  }
  void Break(Thread& t) { Log(t, kBreak); }

  std::vector<std::unique_ptr<Thread>>& threads() { return threads_; }
  const std::vector<uint32_t>& log() const { return log_; }

 private:
  void Log(const Thread& t, Kind kind) { log_.push_back(t.index << 2 | kind); }

  const BranchSampleWriter& writer_;
  std::vector<std::unique_ptr<Thread>> threads_;
  std::unordered_map<int64_t, uint32_t> index_;
  Thread* last_ = nullptr;
  std::vector<uint32_t> log_;  // thread index << 2 | Kind, in stream order
};

BranchSampleWriter::BranchSampleWriter(std::FILE* out, Options options)
    : out_(out), options_(std::move(options)) {}

BranchSampleWriter::Thread& BranchSampleWriter::ThreadOf(int64_t key) {
  if (last_ && last_->key == key) return *last_;
  Thread& t = threads_[key];
  t.key = key;
  return *(last_ = &t);
}

void BranchSampleWriter::OnEvent(const TraceEvent& event) { BranchWalk::Event(*this, event); }

void BranchSampleWriter::OnBlocks(const BlockBatch& batch) { BranchWalk::Batch(*this, batch); }

void BranchSampleWriter::AppendLine(LineCache& cache, Lines& lines, uint64_t from, uint64_t to) const {
  lines.bytes += cache.Line({from, to, 0}, [&](std::string& line) {
    BranchRecord record;
    record.from = from;
    record.to = to;
    if (options_.jsonl)
      AppendRecordJsonHead(line, record);
    else
      AppendRecordText(line, record, options_.symbolize);
  });
  lines.Close();
}

bool BranchSampleWriter::Counted(Thread& t, const Site& site) {
  if (!t.count) t.head = site;
  ++t.count;
  ++records_;
  return t.count == options_.depth;
}

void BranchSampleWriter::Record(Thread& t, uint64_t from, uint64_t to) {
  AppendLine(cache_, t.carried, from, to);
  if (Counted(t, t.site)) Write(t);
}

void BranchSampleWriter::Write(Thread& t, const Lines* more, size_t begin, size_t end) {
  const uint64_t sample = samples_++;
  if (!options_.jsonl) {
    BranchSampleHead head;
    head.sample = sample;
    head.pid = t.head.pid < 0 ? 0 : static_cast<uint32_t>(t.head.pid);
    head.tid = t.key < 0 ? 0 : static_cast<uint32_t>(t.key);
    head.cpu = t.head.cpu;
    head.time_ns = t.head.time_ns;
    head.trace_offset = t.head.offset;
    head.records = t.count;
    AppendSampleHeader(buffer_, head);
    buffer_ += t.carried.bytes;
    if (more && begin < end)
      buffer_.append(more->bytes, more->Begin(begin), more->ends[end - 1] - more->Begin(begin));
  } else {  // each record's head, then its sample's number and the line's end
    char tail[24];
    const size_t tail_size = std::to_chars(tail, tail + 20, sample).ptr - tail + 2;
    tail[tail_size - 2] = '}';
    tail[tail_size - 1] = '\n';
    size_t size = t.carried.bytes.size() + t.carried.size() * tail_size;
    if (more && begin < end)
      size += more->ends[end - 1] - more->Begin(begin) + (end - begin) * tail_size;
    size_t at = buffer_.size();
    buffer_.resize(at + size);
    auto lines = [&](const Lines& lines, size_t from, size_t to) {
      for (size_t i = from; i < to; ++i) {
        const size_t line = lines.ends[i] - lines.Begin(i);
        std::memcpy(&buffer_[at], lines.bytes.data() + lines.Begin(i), line);
        std::memcpy(&buffer_[at + line], tail, tail_size);
        at += line + tail_size;
      }
    };
    lines(t.carried, 0, t.carried.size());
    if (more) lines(*more, begin, end);
  }
  t.carried.clear();
  t.count = 0;
  if (buffer_.size() >= (1u << 16)) Flush();
}

void BranchSampleWriter::Flush() {
  if (buffer_.empty()) return;
  std::fwrite(buffer_.data(), 1, buffer_.size(), out_);
  buffer_.clear();
}

void BranchSampleWriter::OnEnd() {
  std::vector<Thread*> open;
  for (auto& [key, t] : threads_)
    if (t.count) open.push_back(&t);
  std::sort(open.begin(), open.end(), [](const Thread* a, const Thread* b) { return a->key < b->key; });
  for (Thread* t : open) Write(*t);
  Flush();
  std::fflush(out_);
}

std::unique_ptr<EventSink> BranchSampleWriter::NewPart() const {
  return std::make_unique<BranchSamplePart>(*this);
}

void BranchSampleWriter::Fold(std::unique_ptr<EventSink> part_sink) {
  auto& part = static_cast<BranchSamplePart&>(*part_sink);
  struct Cursor {
    Thread* real;
    size_t next = 0;   // the part's next record of this thread
    size_t begin = 0;  // its first record in the real thread's open sample
  };
  std::vector<Cursor> cursors;
  cursors.reserve(part.threads().size());
  for (const auto& t : part.threads()) cursors.push_back({&ThreadOf(t->key)});
  for (const uint32_t entry : part.log()) {
    const BranchSamplePart::Thread& t = *part.threads()[entry >> 2];
    Cursor& c = cursors[t.index];
    Thread& real = *c.real;
    const PartRecords& records = *t.records;
    switch (entry & 3) {
      case BranchSamplePart::kFirst:  // the branch pending before the part, into its first block
        if (real.branch.taken) Record(real, real.branch.from, t.first_ip);
        break;
      case BranchSamplePart::kRecord:
        if (Counted(real, records.sites[c.next++])) {
          Write(real, &records.lines, c.begin, c.next);
          c.begin = c.next;
        }
        break;
      case BranchSamplePart::kBreak:
        if (real.count) Write(real, &records.lines, c.begin, c.next);
        c.begin = c.next;
        break;
    }
  }
  for (auto& t : part.threads()) {
    Cursor& c = cursors[t->index];
    Thread& real = *c.real;
    const Lines& lines = t->records->lines;
    for (size_t i = c.begin; i < c.next; ++i) {  // the open sample's lines, carried over
      real.carried.bytes.append(lines.bytes, lines.Begin(i), lines.ends[i] - lines.Begin(i));
      real.carried.Close();
    }
    real.branch = t->branch;
    real.site = t->site;
    t->records->lines.clear();
    t->records->sites.clear();
    spare_.Give(std::move(t->records));
  }
}

}  // namespace ptprof
