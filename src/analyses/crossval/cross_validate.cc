#include "src/analyses/crossval/cross_validate.h"

#include <algorithm>
#include <cctype>
#include <set>
#include <stdexcept>

#include "src/analyses/crossval/fallthrough_path.h"

namespace ptprof {

template <class Key>
double ProfileOverlap(const std::map<Key, uint64_t>& a, const std::map<Key, uint64_t>& b) {
  unsigned __int128 total_a = 0, total_b = 0;
  for (const auto& [k, n] : a) total_a += n;
  for (const auto& [k, n] : b) total_b += n;
  if (total_a == 0 || total_b == 0) return 0;
  // min(n/A, m/B) = min(n*B, m*A) / (A*B): integer sums, so no order of the keys rounds differently.
  unsigned __int128 sum = 0;
  for (const auto& [k, n] : a)
    if (auto it = b.find(k); it != b.end()) sum += std::min(n * total_b, it->second * total_a);
  return static_cast<double>(100.0L * static_cast<long double>(sum) /
                             (static_cast<long double>(total_a) * static_cast<long double>(total_b)));
}
template double ProfileOverlap(const std::map<uint32_t, uint64_t>&, const std::map<uint32_t, uint64_t>&);
template double ProfileOverlap(const std::map<RangeKey, uint64_t>&, const std::map<RangeKey, uint64_t>&);

CrossValidator::CrossValidator(CrossValidateOptions options, const AddressNormaliser& a,
                               std::function<std::string(uint64_t)> symbolize_a)
    : options_(options), a_(a), symbolize_a_(std::move(symbolize_a)), flow_(a) {}

std::optional<std::pair<Location, Location>> CrossValidator::LocateRecord(
    const BranchSample& s, size_t k, const std::set<std::string>& a_images) {
  auto from = b_->Normalise(s.pid, s.branches[k].from);
  auto to = b_->Normalise(s.pid, s.branches[k].to);
  if (!from || !to || !a_images.count(from->image) || !a_images.count(to->image)) return std::nullopt;
  EdgeTable& table = flow_.table();
  return std::make_pair(table.Locate(*from), table.Locate(*to));
}

void CrossValidator::Expect(const std::vector<BranchSample>& samples, const AddressNormaliser& b) {
  samples_ = &samples;
  b_ = &b;
  EdgeTable& table = flow_.table();
  const std::vector<std::string> images = a_.Images();
  const std::set<std::string> a_images(images.begin(), images.end());
  burst_of_.assign(samples.size(), BurstMatcher::kNone);
  std::vector<uint32_t> edges;
  for (size_t i = 0; i < samples.size(); ++i) {
    const BranchSample& s = samples[i];
    edges.clear();
    bool mapped = !s.branches.empty();
    for (size_t k = 0; k < s.branches.size() && mapped; ++k) {
      const auto record = LocateRecord(s, k, a_images);
      mapped = record.has_value();
      if (mapped) edges.push_back(table.EdgeId(record->first, record->second, true));
    }
    if (mapped) burst_of_[i] = matcher_.Add(edges);
  }
  matcher_.Build();
  flow_.LookFor(matcher_);
}

size_t CrossValidator::BurstsFound() const {
  size_t found = 0;
  for (const uint32_t burst : burst_of_) found += burst != BurstMatcher::kNone && matcher_.Found(burst);
  return found;
}

std::string FunctionOf(const std::string& symbol) {
  if (symbol.empty()) return "?";
  // Describe's "+0x13" after the name, if any (a C++ name may hold a '+' of its own:
  // "operator+(int)").
  const size_t plus = symbol.rfind("+0x");
  if (plus == std::string::npos || plus == 0) return symbol;
  for (size_t i = plus + 3; i < symbol.size(); ++i)
    if (!std::isxdigit(static_cast<unsigned char>(symbol[i]))) return symbol;
  return symbol.substr(0, plus);
}

CrossValidation CrossValidator::Validate(const ImageSet& b_code) {
  if (!samples_) throw std::logic_error("CrossValidator::Validate before Expect");
  const std::vector<BranchSample>& samples = *samples_;
  CrossValidation out;
  flow_.OnEnd();
  EdgeTable& table = flow_.table();
  out.flow_branches = flow_.branches();
  out.flow_runs = flow_.runs();
  // A's profile, each edge and range named by the function of the lowest address of the branch
  // that took or ended it; B's edges and ranges that A lacks are named from B's code as they come.
  Counts a_counts;
  std::vector<std::string> function_of_edge;
  std::vector<uint8_t> named;  // by A's flow, or by the first of B's records that took it
  for (uint32_t id = 0; id < table.size(); ++id) {
    const uint64_t count = flow_.EdgeCount(id);
    function_of_edge.push_back(count ? FunctionOf(symbolize_a_(flow_.SourceOf(id))) : "?");
    named.push_back(count != 0);
    if (count) a_counts.edges[id] = count;
  }
  std::map<RangeKey, std::string> function_of_range;
  for (const FlowEdges::RangeCount& r : flow_.Ranges()) {
    a_counts.ranges[r.range] = r.count;
    function_of_range[r.range] = FunctionOf(symbolize_a_(r.source));
  }
  out.images_a = a_.Images();
  out.images_b = b_->Images();
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
  for (size_t i = 0; i < samples.size(); ++i) {
    const BranchSample& s = samples[i];
    ++out.bursts;
    out.records += s.branches.size();
    if (s.branches.empty()) {
      ++out.empty;
      continue;
    }
    std::vector<Location> to_locations;
    bool mapped = true;
    size_t unmapped_at = 0;
    for (size_t k = 0; k < s.branches.size() && mapped; ++k) {
      const auto record = LocateRecord(s, k, a_images);
      if (!record) {
        mapped = false;
        unmapped_at = k;
        break;
      }
      const auto [lf, lt] = *record;
      // Profile counts of B, on the same numbering (Expect numbered every edge of its records up
      // to the first outside A's files).
      const uint32_t id = table.EdgeId(lf, lt, false);
      ++b_counts.edges[id];
      if (!named[id]) {
        function_of_edge[id] = FunctionOf(b_code.Symbolize(s.branches[k].from));
        named[id] = 1;
      }
      if (k > 0 && to_locations.back().image == lf.image && lf.offset >= to_locations.back().offset) {
        RangeKey range{lf.image, to_locations.back().offset, lf.offset};
        ++b_counts.ranges[range];
        function_of_range.try_emplace(range, function_of_edge[id]);
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
    if (burst_of_[i] != BurstMatcher::kNone && matcher_.Found(burst_of_[i])) {
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
  out.edge_overlap = ProfileOverlap(a_counts.edges, b_counts.edges);
  out.range_overlap = ProfileOverlap(a_counts.ranges, b_counts.ranges);
  std::map<std::string, Counts> a_by, b_by;
  for (const auto& [id, n] : a_counts.edges) a_by[function_of_edge[id]].edges[id] += n;
  for (const auto& [id, n] : b_counts.edges) b_by[function_of_edge[id]].edges[id] += n;
  for (const auto& [r, n] : a_counts.ranges) a_by[function_of_range[r]].ranges[r] += n;
  for (const auto& [r, n] : b_counts.ranges) b_by[function_of_range[r]].ranges[r] += n;
  double total_a = 0, total_b = 0;
  for (const auto& [id, n] : a_counts.edges) total_a += static_cast<double>(n);
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
