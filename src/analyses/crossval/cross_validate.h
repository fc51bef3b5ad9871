#pragma once
// CrossValidation answers "do a decoded PT/ETM flow (A) and recorded branch records (B) of the same
// program agree?": (a) path consistency: every burst of B must occur as a contiguous run of taken
// branches somewhere in A's flow, else at least be a feasible path (each record's target reaches
// the next record's branch by falling through, checked on B's code), else it is inconsistent;
// (b) profile similarity in the style of AutoFDO's profile_diff: the overlap
//   100% * sum over keys k of min(a_k / sum(a), b_k / sum(b))
// of edge counts {from -> to} and of range counts [to_i, from_{i+1}] (AutoFDO's ranges), overall
// and per function. Addresses of both sides are normalised to (file base name, file offset)
// through each side's own sideband before anything is compared. A's flow is collected by FlowEdges
// (flow()), which may take it in parts on several threads.
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>
#include <string>
#include <tuple>
#include <vector>

#include "decoders/lbr/branch_record.h"
#include "sideband/image_set.h"
#include "sideband/x86_insn.h"
#include "src/analyses/crossval/address_normaliser.h"
#include "src/analyses/crossval/branch_edges.h"
#include "src/analyses/crossval/burst_matcher.h"
#include "src/analyses/crossval/flow_edges.h"

namespace ptprof {

struct CrossValidateOptions {
  size_t examples = 5;        // counterexamples kept
  size_t top_functions = 10;  // functions in the per-function table
};

struct BurstCounterexample {
  uint64_t sample = 0;
  uint64_t trace_offset = 0;
  uint32_t tid = 0;
  size_t record = 0;  // index (oldest first) of the record whose successor cannot follow
  uint64_t from = 0, to = 0, next_from = 0;
  std::string from_symbol, to_symbol, next_symbol;
  std::string reason;
};

struct FunctionSimilarity {
  std::string name;
  double share_a = 0, share_b = 0;  // % of all edge counts of each side
  double edge_overlap = 0, range_overlap = 0;
};

struct CrossValidation {
  uint64_t flow_branches = 0, flow_runs = 0;
  uint64_t bursts = 0, records = 0;
  uint64_t bursts_mapped = 0;  // every address lies in a file A also executes from
  uint64_t in_flow = 0, feasible = 0, inconsistent = 0, unmapped = 0, empty = 0;
  std::vector<BurstCounterexample> counterexamples;  // inconsistent bursts
  std::vector<BurstCounterexample> unmapped_examples;
  std::vector<std::string> images_a, images_b;
  double edge_overlap = 0, range_overlap = 0;
  std::vector<FunctionSimilarity> functions;
};

class CrossValidator {
 public:
  // `symbolize_a`: A's "symbol+0xoff" for an A address (function names for the per-function table).
  CrossValidator(CrossValidateOptions options, const AddressNormaliser& a,
                 std::function<std::string(uint64_t)> symbolize_a);

  // B's samples (normalised with `b`; both outlive Validate), before A's flow goes into flow():
  // each burst that maps into A's files is numbered as edges and looked for in the flow as it
  // goes by (BurstMatcher).
  void Expect(const std::vector<BranchSample>& samples, const AddressNormaliser& b);

  // The sink A's decoded flow goes into (ended with OnEnd before Validate).
  FlowEdges& flow() { return flow_; }
  // How many of Expect's samples the flow took, contiguously, so far.
  size_t BurstsFound() const;

  // Compares Expect's samples (code and symbols from `b_code`) with the flow.
  CrossValidation Validate(const ImageSet& b_code);

 private:
  struct Counts {
    std::map<uint32_t, uint64_t> edges;
    std::map<RangeKey, uint64_t> ranges;
  };

  // Record `k` of `s` as A's table locates it, none when an end lies outside `a_images` (A's
  // files).
  std::optional<std::pair<Location, Location>> LocateRecord(const BranchSample& s, size_t k,
                                                            const std::set<std::string>& a_images);

  CrossValidateOptions options_;
  const AddressNormaliser& a_;
  std::function<std::string(uint64_t)> symbolize_a_;
  FlowEdges flow_;
  BurstMatcher matcher_;
  const std::vector<BranchSample>* samples_ = nullptr;  // Expect's
  const AddressNormaliser* b_ = nullptr;
  std::vector<uint32_t> burst_of_;  // per sample: its burst, kNone: not looked for
};

// The function of a symbolised address, "name+0x13" or "name" as SymbolTable::Describe gives
// it; "?" for "" (no symbol).
std::string FunctionOf(const std::string& symbol);

// 100% * sum_k min(a_k/A, b_k/B), worked out exactly (the same whatever the keys' order); 0 when
// either side is empty.
template <class Key>
double ProfileOverlap(const std::map<Key, uint64_t>& a, const std::map<Key, uint64_t>& b);

}  // namespace ptprof
