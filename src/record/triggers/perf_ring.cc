#include "src/record/triggers/perf_ring.h"

#include <linux/perf_event.h>

#include <vector>

namespace ptprof::record::triggers {

void DrainPerfRing(void* base, size_t fallback_size,
                   const std::function<void(const uint8_t* record, size_t size, uint32_t type)>& visit) {
  auto* meta = static_cast<perf_event_mmap_page*>(base);
  const auto* data = static_cast<const uint8_t*>(base) + meta->data_offset;
  const uint64_t size = meta->data_size ? meta->data_size : fallback_size;
  const uint64_t head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
  uint64_t tail = meta->data_tail;
  std::vector<uint8_t> record;
  while (size != 0 && tail + sizeof(perf_event_header) <= head) {
    perf_event_header header{};
    for (size_t i = 0; i < sizeof header; ++i)
      reinterpret_cast<uint8_t*>(&header)[i] = data[(tail + i) % size];
    if (header.size < sizeof header || tail + header.size > head) break;
    record.resize(header.size);
    for (size_t i = 0; i < header.size; ++i) record[i] = data[(tail + i) % size];
    tail += header.size;
    visit(record.data(), record.size(), header.type);
  }
  __atomic_store_n(&meta->data_tail, tail, __ATOMIC_RELEASE);
}

}  // namespace ptprof::record::triggers
