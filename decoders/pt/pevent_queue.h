#pragma once
// PeventQueue answers "which sideband file has the next record due at this trace time?": it keeps
// the loaded files ordered by the time of their next record the way libipt-sb's session does (a
// file goes before others whose next record has the same time, so the file just read from keeps
// going, and of files given together the first one leads), and keeps files that ran out of
// records apart (ptxed still shows them the trace's events). No libipt types here.
#include <cstdint>
#include <vector>

#include "decoders/pt/pevent_source.h"

namespace ptprof::pt {

class PeventQueue {
 public:
  // Takes the files in command-line order; files without records are left out.
  explicit PeventQueue(std::vector<PeventSource> sources);

  // The file whose current record is due at `tsc` (its time <= tsc), taken out of the order; or
  // null. Hand it back with Requeue after reading its record.
  PeventSource* PopDue(uint64_t tsc);
  // Puts `source` back in time order, or among the finished files when it has no more records.
  void Requeue(PeventSource* source);

  // Files with records left, in order, and files that ran out (ptxed presents events to both).
  const std::vector<PeventSource*>& pending() const { return order_; }
  const std::vector<PeventSource*>& finished() const { return finished_; }
  // Drops a finished file (it has nothing left to do).
  void Retire(PeventSource* source);

 private:
  void Insert(PeventSource* source);

  std::vector<PeventSource> sources_;
  std::vector<PeventSource*> order_;
  std::vector<PeventSource*> finished_;
};

}  // namespace ptprof::pt
