#include "src/model/event_equality.h"

#include <cstring>
#include <tuple>

namespace ptprof {

namespace {

auto Fields(const ExecBlock& b) {
  return std::tie(b.first_ip, b.last_ip, b.insns, b.last_insn_size, b.end, b.mode, b.speculative,
                  b.truncated, b.end_time_ns);
}
auto Fields(const TraceGap& g) { return std::tie(g.reason, g.ip, g.has_ip, g.detail, g.code); }
auto Fields(const TraceToggle& t) { return std::tie(t.kind, t.ip, t.has_ip); }
auto Fields(const ModeChange& m) { return std::tie(m.mode, m.ip, m.has_ip); }
auto Fields(const ContextSwitch& c) {
  return std::tie(c.kind, c.value, c.non_root, c.next_pid, c.next_tid, c.ip, c.has_ip);
}
auto Fields(const PowerEvent& p) { return std::tie(p.kind, p.value, p.hints, p.ext, p.ip, p.has_ip); }
auto Fields(const Marker& m) { return std::tie(m.kind, m.value, m.ip, m.has_ip, m.label); }
auto Fields(const Exception& e) { return std::tie(e.kind, e.number, e.return_ip, e.has_return_ip); }
auto Fields(const PeContext& p) {
  return std::tie(p.mode, p.exception_level, p.security, p.is_64bit, p.context_id,
                  p.has_context_id, p.vmid, p.has_vmid);
}

bool SameBody(const Instruction& a, const Instruction& b) {
  return a.ip == b.ip && a.size == b.size && std::memcmp(a.bytes, b.bytes, sizeof a.bytes) == 0 &&
         a.iclass == b.iclass && a.mode == b.mode && a.speculative == b.speculative;
}
template <class T>
bool SameBody(const T& a, const T& b) {
  return Fields(a) == Fields(b);
}

}  // namespace

bool SameEvent(const TraceEvent& a, const TraceEvent& b) {
  return a.header.tsc == b.header.tsc && SameEventBesidesTsc(a, b);
}

bool SameEventBesidesTsc(const TraceEvent& a, const TraceEvent& b) {
  const EventHeader& x = a.header;
  const EventHeader& y = b.header;
  if (a.body.index() != b.body.index() || x.time_ns != y.time_ns || x.offset != y.offset ||
      x.cpu != y.cpu || x.pid != y.pid || x.tid != y.tid)
    return false;
  return std::visit(
      [&](const auto& body) {
        using T = std::decay_t<decltype(body)>;
        return SameBody(body, std::get<T>(b.body));
      },
      a.body);
}

}  // namespace ptprof
