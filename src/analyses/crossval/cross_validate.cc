#include "src/analyses/crossval/cross_validate.h"

#include <algorithm>
#include <set>

#include "src/analyses/crossval/fallthrough_path.h"

namespace ptprof {

template <class Key>
double ProfileOverlap(const std::map<Key, uint64_t>& a, const std::map<Key, uint64_t>& b) {
  double total_a = 0, total_b = 0;
  for (const auto& [k, n] : a) total_a += static_cast<double>(n);
  for (const auto& [k, n] : b) total_b += static_cast<double>(n);
  if (total_a == 0 || total_b == 0) return 0;
  double sum = 0;
  for (const auto& [k, n] : a)
    if (auto it = b.find(k); it != b.end())
      sum += std::min(static_cast<double>(n) / total_a, static_cast<double>(it->second) / total_b);
  return 100.0 * sum;
}
template double ProfileOverlap(const std::map<uint32_t, uint64_t>&, const std::map<uint32_t, uint64_t>&);
template double ProfileOverlap(const std::map<std::tuple<uint32_t, uint64_t, uint64_t>, uint64_t>&,
                               const std::map<std::tuple<uint32_t, uint64_t, uint64_t>, uint64_t>&);

CrossValidator::CrossValidator(CrossValidateOptions options, const AddressNormaliser& a,
                               std::function<std::string(uint64_t)> symbolize_a)
    : options_(options), a_(a), symbolize_a_(std::move(symbolize_a)) {}

std::string CrossValidator::FunctionOf(const std::string& symbol) const {
  if (symbol.empty()) return "?";
  size_t plus = symbol.rfind('+');
  return plus == std::string::npos ? symbol : symbol.substr(0, plus);
}

std::optional<Location> CrossValidator::LocateA(int32_t pid, uint64_t address) {
  auto [it, added] = a_cache_.try_emplace(address);
  if (added) {
    auto n = a_.Normalise(pid, address);
    if (n) it->second = table_.Locate(*n);
  }
  return it->second;
}

void CrossValidator::AddFlowBranch(int64_t thread, int32_t pid, const BranchRecord& branch) {
  auto from = LocateA(pid, branch.from);
  auto to = LocateA(pid, branch.to);
  Last& last = last_to_[thread];
  if (!from || !to) {
    ++a_unmapped_;
    index_.Break(thread);
    last.valid = false;
    return;
  }
  const uint32_t id = table_.EdgeId(*from, *to, true);
  index_.Add(thread, id);
  ++a_counts_.edges[id];
  if (!function_of_edge_.count(id)) function_of_edge_[id] = FunctionOf(symbolize_a_(branch.from));
  if (last.valid && last.to.image == from->image && from->offset >= last.to.offset) {
    RangeKey range{from->image, last.to.offset, from->offset};
    ++a_counts_.ranges[range];
    if (!function_of_range_.count(range))
      function_of_range_[range] = function_of_edge_[id];
  }
  last.valid = true;
  last.to = *to;
}

void CrossValidator::AddFlowBreak(int64_t thread) {
  index_.Break(thread);
  last_to_[thread].valid = false;
}

CrossValidation CrossValidator::Validate(const std::vector<BranchSample>& samples,
                                         const AddressNormaliser& b, const ImageSet& b_code) {
  CrossValidation out;
  index_.Finish(table_.size());
  out.flow_branches = index_.branches();
  out.flow_runs = index_.runs();
  out.images_a = a_.Images();
  out.images_b = b.Images();
  const std::set<std::string> a_images(out.images_a.begin(), out.images_a.end());
  X86Decoder x86;
  Counts b_counts;
  auto example = [&](const BranchSample& s, size_t k, std::string reason) {
    BurstCounterexample e;
    e.sample = s.sample;
    e.trace_offset = s.trace_offset;
    e.tid = s.tid;
    e.record = k;
    e.from = s.branches[k].from;
    e.to = s.branches[k].to;
    e.next_from = k + 1 < s.branches.size() ? s.branches[k + 1].from : 0;
    e.from_symbol = b_code.Symbolize(e.from);
    e.to_symbol = b_code.Symbolize(e.to);
    e.next_symbol = e.next_from ? b_code.Symbolize(e.next_from) : "";
    e.reason = std::move(reason);
    return e;
  };
  for (const BranchSample& s : samples) {
    ++out.bursts;
    out.records += s.branches.size();
    if (s.branches.empty()) {
      ++out.empty;
      continue;
    }
    std::vector<uint32_t> run;
    std::vector<Location> to_locations;
    bool mapped = true;
    size_t unmapped_at = 0;
    for (size_t k = 0; k < s.branches.size() && mapped; ++k) {
      auto from = b.Normalise(s.pid, s.branches[k].from);
      auto to = b.Normalise(s.pid, s.branches[k].to);
      if (!from || !to || !a_images.count(from->image) || !a_images.count(to->image)) {
        mapped = false;
        unmapped_at = k;
        break;
      }
      const Location lf = table_.Locate(*from), lt = table_.Locate(*to);
      run.push_back(table_.EdgeId(lf, lt, false));
      // Profile counts of B, on the same numbering (new edges get numbers too).
      const uint32_t id = table_.EdgeId(lf, lt, true);
      ++b_counts.edges[id];
      if (!function_of_edge_.count(id)) function_of_edge_[id] = FunctionOf(b_code.Symbolize(s.branches[k].from));
      if (k > 0 && to_locations.back().image == lf.image && lf.offset >= to_locations.back().offset) {
        RangeKey range{lf.image, to_locations.back().offset, lf.offset};
        ++b_counts.ranges[range];
        if (!function_of_range_.count(range)) function_of_range_[range] = function_of_edge_[id];
      }
      to_locations.push_back(lt);
    }
    if (!mapped) {
      ++out.unmapped;
      if (out.unmapped_examples.size() < options_.examples)
        out.unmapped_examples.push_back(example(s, unmapped_at, "an address outside A's files"));
      continue;
    }
    ++out.bursts_mapped;
    if (index_.Contains(run)) {
      ++out.in_flow;
      continue;
    }
    std::string why;
    size_t bad = 0;
    for (size_t k = 0; k + 1 < s.branches.size(); ++k) {
      FallThroughVerdict v = CheckFallThrough(b_code, x86, s.branches[k].to, s.branches[k + 1].from);
      if (!v.feasible) {
        why = v.reason;
        bad = k;
        break;
      }
    }
    if (why.empty()) {
      ++out.feasible;
    } else {
      ++out.inconsistent;
      if (out.counterexamples.size() < options_.examples) out.counterexamples.push_back(example(s, bad, why));
    }
  }
  // Profile similarity.
  out.edge_overlap = ProfileOverlap(a_counts_.edges, b_counts.edges);
  out.range_overlap = ProfileOverlap(a_counts_.ranges, b_counts.ranges);
  std::map<std::string, Counts> a_by, b_by;
  for (const auto& [id, n] : a_counts_.edges) a_by[function_of_edge_[id]].edges[id] += n;
  for (const auto& [id, n] : b_counts.edges) b_by[function_of_edge_[id]].edges[id] += n;
  for (const auto& [r, n] : a_counts_.ranges) a_by[function_of_range_[r]].ranges[r] += n;
  for (const auto& [r, n] : b_counts.ranges) b_by[function_of_range_[r]].ranges[r] += n;
  double total_a = 0, total_b = 0;
  for (const auto& [id, n] : a_counts_.edges) total_a += static_cast<double>(n);
  for (const auto& [id, n] : b_counts.edges) total_b += static_cast<double>(n);
  std::set<std::string> names;
  for (const auto& [name, c] : a_by) names.insert(name);
  for (const auto& [name, c] : b_by) names.insert(name);
  for (const std::string& name : names) {
    FunctionSimilarity f;
    f.name = name;
    const Counts& ca = a_by[name];
    const Counts& cb = b_by[name];
    double sa = 0, sb = 0;
    for (const auto& [id, n] : ca.edges) sa += static_cast<double>(n);
    for (const auto& [id, n] : cb.edges) sb += static_cast<double>(n);
    f.share_a = total_a ? 100.0 * sa / total_a : 0;
    f.share_b = total_b ? 100.0 * sb / total_b : 0;
    f.edge_overlap = ProfileOverlap(ca.edges, cb.edges);
    f.range_overlap = ProfileOverlap(ca.ranges, cb.ranges);
    out.functions.push_back(f);
  }
  std::sort(out.functions.begin(), out.functions.end(), [](const auto& x, const auto& y) {
    return x.share_a + x.share_b > y.share_a + y.share_b;
  });
  if (out.functions.size() > options_.top_functions) out.functions.resize(options_.top_functions);
  return out;
}

}  // namespace ptprof
