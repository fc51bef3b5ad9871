#include "decoders/pt/pevent_queue.h"

#include <algorithm>

namespace ptprof::pt {

PeventQueue::PeventQueue(std::vector<PeventSource> sources) : sources_(std::move(sources)) {
  // libipt fetches the files in reverse order, each one going before files of the same time.
  for (auto it = sources_.rbegin(); it != sources_.rend(); ++it)
    if (!it->done()) Insert(&*it);
}

void PeventQueue::Insert(PeventSource* source) {
  const uint64_t tsc = source->current().tsc;
  auto at = std::find_if(order_.begin(), order_.end(),
                         [tsc](const PeventSource* other) { return tsc <= other->current().tsc; });
  order_.insert(at, source);
}

PeventSource* PeventQueue::PopDue(uint64_t tsc) {
  if (order_.empty() || tsc < order_.front()->current().tsc) return nullptr;
  PeventSource* source = order_.front();
  order_.erase(order_.begin());
  return source;
}

void PeventQueue::Requeue(PeventSource* source) {
  if (source->done())
    finished_.insert(finished_.begin(), source);  // libipt keeps its retired files newest first
  else
    Insert(source);
}

void PeventQueue::Retire(PeventSource* source) {
  finished_.erase(std::remove(finished_.begin(), finished_.end(), source), finished_.end());
}

}  // namespace ptprof::pt
