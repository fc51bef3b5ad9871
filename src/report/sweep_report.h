#pragma once
// SweepReport answers "what did the sweep measure?" as text tables (the main table, packets per
// kind, trace-size bounds, the Epsilon/Omega normalisation, failed rows), as CSV (one line per row,
// one column per packet kind) and as one JSON document. Field names: docs/sweep.md.
#include <cstdio>
#include <vector>

#include "src/analyses/sweep/sweep_metrics.h"
#include "src/analyses/sweep/sweep_row.h"

namespace ptprof {

struct SweepReport {
  std::vector<sweep::SweepRow> rows;
  std::vector<sweep::SizeBounds> bounds;
  std::vector<sweep::BranchCost> branch_costs;
};

void WriteSweepText(std::FILE* out, const SweepReport& report);
void WriteSweepCsv(std::FILE* out, const SweepReport& report);
void WriteSweepJson(std::FILE* out, const SweepReport& report);

}  // namespace ptprof
