#pragma once
// SectionIndex answers "which image section shows at this address, and up to where?" in
// O(log n) for sections that may overlap, a later section hiding the part of an earlier one it
// covers (ImageSet's rule). It cuts the address space into spans each shown by one section: a
// span ends where its section ends or where a later section begins.
#include <cstdint>
#include <vector>

namespace ptprof {

class SectionIndex {
 public:
  struct Range {
    uint64_t address = 0;
    uint64_t size = 0;
  };
  struct Span {
    uint64_t start = 0;
    uint64_t end = 0;  // exclusive
    uint32_t section = 0;
  };

  SectionIndex() = default;
  // `sections` in the order they were added (later ones take precedence).
  explicit SectionIndex(const std::vector<Range>& sections);

  // The span that holds `address`, or nullptr when no section maps it.
  const Span* Find(uint64_t address) const;
  const std::vector<Span>& spans() const { return spans_; }

 private:
  std::vector<Span> spans_;  // sorted, disjoint
};

}  // namespace ptprof
