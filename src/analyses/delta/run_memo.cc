#include "src/analyses/delta/run_memo.h"

#include <atomic>

namespace ptprof::delta {

namespace {
std::atomic<uint32_t> last_memo_id{0};
}  // namespace

RunMemo::RunMemo() : id_(++last_memo_id) {}

void RunMemo::Grow() {
  ZeroedArray<Entry> old = std::move(table_);
  table_ = ZeroedArray<Entry>(old.size() * 2, Pages::kFaultedIn);
  --shift_;
  const size_t mask = table_.size() - 1;
  for (const Entry& entry : old) {
    if (entry.state == State::kEmpty) continue;
    size_t i = Home(entry.source, entry.run, entry.count, shift_);
    while (table_[i].state != State::kEmpty) i = (i + 1) & mask;
    table_[i] = entry;
  }
}

}  // namespace ptprof::delta
