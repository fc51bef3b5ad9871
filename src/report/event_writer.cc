#include "src/report/event_writer.h"

#include <cinttypes>

#include "src/report/json_text.h"

namespace ptprof {

namespace {

template <class... Ts>
struct Overloaded : Ts... {
  using Ts::operator()...;
};
template <class... Ts>
Overloaded(Ts...) -> Overloaded<Ts...>;

const char* ToggleName(TraceToggle::Kind kind) {
  switch (kind) {
    case TraceToggle::Kind::kEnabled: return "enabled";
    case TraceToggle::Kind::kDisabled: return "disabled";
    case TraceToggle::Kind::kAsyncDisabled: return "disabled";
    case TraceToggle::Kind::kResumed: return "resumed";
  }
  return "enabled";
}

const char* PowerName(PowerEvent::Kind kind) {
  switch (kind) {
    case PowerEvent::Kind::kCoreBusRatio: return "cbr";
    case PowerEvent::Kind::kPowerEntry: return "pwre";
    case PowerEvent::Kind::kPowerExit: return "pwrx";
    case PowerEvent::Kind::kExecStop: return "exstop";
    case PowerEvent::Kind::kMwait: return "mwait";
  }
  return "power";
}

const char* MarkerName(Marker::Kind kind) {
  switch (kind) {
    case Marker::Kind::kTrigger: return "trigger";
    case Marker::Kind::kSnapshot: return "snapshot";
    case Marker::Kind::kTsxBegin: return "tsx_begin";
    case Marker::Kind::kTsxCommit: return "tsx_commit";
    case Marker::Kind::kTsxAbort: return "tsx_abort";
    case Marker::Kind::kTraceStop: return "stop";
    case Marker::Kind::kPtwrite: return "ptwrite";
    case Marker::Kind::kTick: return "tick";
    case Marker::Kind::kMaintenance: return "mnt";
  }
  return "marker";
}

const char* SwitchName(ContextSwitch::Kind kind) {
  switch (kind) {
    case ContextSwitch::Kind::kPaging: return "paging";
    case ContextSwitch::Kind::kVmcs: return "vmcs";
    case ContextSwitch::Kind::kSideband: return "switch";
  }
  return "switch";
}

// Appends the header fields every record shares: cpu (when known), time, pid/tid.
void AppendHeader(std::string& s, const EventHeader& h) {
  if (h.cpu != kUnknownId) s += ",\"cpu\":" + std::to_string(h.cpu);
  if (h.time_ns != kUnknownTime) s += ",\"time\":" + std::to_string(h.time_ns);
  if (h.pid != kUnknownId) s += ",\"pid\":" + std::to_string(h.pid);
  if (h.tid != kUnknownId) s += ",\"tid\":" + std::to_string(h.tid);
}

void AppendIp(std::string& s, bool has_ip, uint64_t ip) {
  if (has_ip) s += ",\"ip\":\"" + HexAddress(ip) + "\"";
}

}  // namespace

const char* InsnClassName(BlockEnd iclass) {
  switch (iclass) {
    case BlockEnd::kFallThrough:
    case BlockEnd::kUnknown:
    case BlockEnd::kTraceStop: return "other";
    case BlockEnd::kCondTaken:
    case BlockEnd::kCondNotTaken: return "cond_jump";
    default: return BlockEndName(iclass);
  }
}

std::string EventToJson(const TraceEvent& event) {
  std::string s;
  std::visit(
      Overloaded{
          [&](const ExecBlock& b) {
            s = "{\"first_ip\":\"" + HexAddress(b.first_ip) + "\",\"last_ip\":\"" +
                HexAddress(b.last_ip) + "\",\"insns\":" + std::to_string(b.insns) +
                ",\"exit\":\"" + BlockEndName(b.end) + "\"";
            if (b.speculative) s += ",\"speculative\":true";
            AppendHeader(s, event.header);
            if (b.end_time_ns != kUnknownTime) s += ",\"end_time\":" + std::to_string(b.end_time_ns);
          },
          [&](const Instruction& i) {
            s = "{\"ip\":\"" + HexAddress(i.ip) + "\",\"size\":" + std::to_string(i.size) +
                ",\"iclass\":\"" + InsnClassName(i.iclass) + "\"";
            if (i.speculative) s += ",\"speculative\":true";
            AppendHeader(s, event.header);
          },
          [&](const TraceGap& g) {
            s = "{\"event\":\"gap\",\"reason\":\"" + std::string(GapReasonName(g.reason)) + "\"";
            AppendIp(s, g.has_ip, g.ip);
            s += ",\"offset\":" + std::to_string(event.header.offset);
            if (!g.detail.empty()) s += ",\"detail\":" + JsonString(g.detail);
            AppendHeader(s, event.header);
          },
          [&](const TraceToggle& t) {
            s = "{\"event\":\"" + std::string(ToggleName(t.kind)) + "\"";
            AppendIp(s, t.has_ip, t.ip);
            AppendHeader(s, event.header);
          },
          [&](const ModeChange& m) {
            s = "{\"event\":\"exec_mode\",\"mode\":\"" + std::string(ExecModeName(m.mode)) + "\"";
            AppendIp(s, m.has_ip, m.ip);
            AppendHeader(s, event.header);
          },
          [&](const ContextSwitch& c) {
            s = "{\"event\":\"" + std::string(SwitchName(c.kind)) + "\"";
            if (c.kind != ContextSwitch::Kind::kSideband)
              s += ",\"value\":\"" + HexAddress(c.value) + "\"";
            if (c.next_pid != kUnknownId) s += ",\"next_pid\":" + std::to_string(c.next_pid);
            if (c.next_tid != kUnknownId) s += ",\"next_tid\":" + std::to_string(c.next_tid);
            AppendIp(s, c.has_ip, c.ip);
            AppendHeader(s, event.header);
          },
          [&](const PowerEvent& p) {
            s = "{\"event\":\"" + std::string(PowerName(p.kind)) + "\",\"value\":" +
                std::to_string(p.value);
            AppendIp(s, p.has_ip, p.ip);
            AppendHeader(s, event.header);
          },
          [&](const Marker& m) {
            s = "{\"event\":\"" + std::string(MarkerName(m.kind)) + "\"";
            if (m.kind == Marker::Kind::kPtwrite) s += ",\"value\":\"" + HexAddress(m.value) + "\"";
            if (!m.label.empty()) s += ",\"label\":" + JsonString(m.label);
            AppendIp(s, m.has_ip, m.ip);
            AppendHeader(s, event.header);
          },
      },
      event.body);
  s += '}';
  return s;
}

EventWriter::EventWriter(std::FILE* out, EventWriterOptions options)
    : out_(out), options_(std::move(options)) {}

std::string EventWriter::Symbol(uint64_t ip) const {
  if (!options_.symbolize) return {};
  std::string sym = options_.symbolize(ip);
  return sym.empty() ? sym : "<" + sym + ">";
}

void EventWriter::OnEvent(const TraceEvent& event) {
  if (options_.format == EventFormat::kJsonl) {
    WriteJsonl(event);
  } else {
    WriteText(event);
  }
}

void EventWriter::WriteJsonl(const TraceEvent& event) {
  std::string line = EventToJson(event);
  line += '\n';
  std::fwrite(line.data(), 1, line.size(), out_);
}

void EventWriter::WriteText(const TraceEvent& event) {
  std::string prefix;
  if (options_.show_cpu && event.header.cpu != kUnknownId)
    prefix += "cpu" + std::to_string(event.header.cpu) + "  ";
  if (event.header.time_ns != kUnknownTime) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%14" PRIu64 "  ", event.header.time_ns);
    prefix += buf;
  }
  std::visit(
      Overloaded{
          [&](const ExecBlock& b) {
            std::fprintf(out_, "%s%016" PRIx64 "..%016" PRIx64 "  %6u insns  %-14s %s\n",
                         prefix.c_str(), b.first_ip, b.last_ip, b.insns, BlockEndName(b.end),
                         Symbol(b.first_ip).c_str());
          },
          [&](const Instruction& i) {
            std::string dis = options_.disassemble ? options_.disassemble(i) : std::string();
            std::fprintf(out_, "%s%016" PRIx64 "  %-40s %s\n", prefix.c_str(), i.ip, dis.c_str(),
                         Symbol(i.ip).c_str());
          },
          [&](const TraceGap& g) {
            std::fprintf(out_, "%s[gap: %s at offset 0x%" PRIx64, prefix.c_str(),
                         GapReasonName(g.reason), event.header.offset);
            if (g.has_ip) {
              std::string sym = Symbol(g.ip);
              std::fprintf(out_, ", ip 0x%" PRIx64 "%s%s", g.ip, sym.empty() ? "" : " ", sym.c_str());
            }
            if (!g.detail.empty()) std::fprintf(out_, ": %s", g.detail.c_str());
            std::fprintf(out_, "]\n");
          },
          [&](const auto&) {
            std::fprintf(out_, "%s[%s]\n", prefix.c_str(), EventText(event).c_str());
          },
      },
      event.body);
}

std::string EventWriter::EventText(const TraceEvent& event) const {
  // The event's JSONL name, what it carries, then where it happened.
  std::string text = EventName(event);
  char buf[96];
  bool has_ip = false;
  uint64_t ip = 0;
  std::visit(
      Overloaded{
          [&](const TraceToggle& t) {
            has_ip = t.has_ip;
            ip = t.ip;
          },
          [&](const ModeChange& m) {
            text += std::string(" ") + ExecModeName(m.mode);
            has_ip = m.has_ip;
            ip = m.ip;
          },
          [&](const ContextSwitch& c) {
            if (c.kind == ContextSwitch::Kind::kPaging) {
              std::snprintf(buf, sizeof buf, " cr3 0x%" PRIx64 "%s", c.value, c.non_root ? " nr" : "");
              text += buf;
            } else if (c.kind == ContextSwitch::Kind::kVmcs) {
              std::snprintf(buf, sizeof buf, " base 0x%" PRIx64, c.value);
              text += buf;
            }
            if (c.next_pid != kUnknownId) text += " pid " + std::to_string(c.next_pid);
            if (c.next_tid != kUnknownId) text += " tid " + std::to_string(c.next_tid);
            has_ip = c.has_ip;
            ip = c.ip;
          },
          [&](const PowerEvent& p) {
            if (p.kind == PowerEvent::Kind::kMwait) {
              std::snprintf(buf, sizeof buf, " hints 0x%x ext 0x%x", p.hints, p.ext);
            } else if (p.kind == PowerEvent::Kind::kExecStop) {
              buf[0] = '\0';
            } else {
              std::snprintf(buf, sizeof buf, " 0x%" PRIx64, p.value);
            }
            text += buf;
            has_ip = p.has_ip;
            ip = p.ip;
          },
          [&](const Marker& m) {
            if (m.kind == Marker::Kind::kPtwrite || m.kind == Marker::Kind::kMaintenance) {
              std::snprintf(buf, sizeof buf, " 0x%" PRIx64, m.value);
              text += buf;
            }
            if (!m.label.empty()) text += " " + m.label;
            has_ip = m.has_ip;
            ip = m.ip;
          },
          [&](const auto&) {},
      },
      event.body);
  if (has_ip) {
    std::snprintf(buf, sizeof buf, " ip 0x%" PRIx64, ip);
    text += buf;
    std::string sym = Symbol(ip);
    if (!sym.empty()) text += " " + sym;
  }
  return text;
}

void EventWriter::OnEnd() { std::fflush(out_); }

}  // namespace ptprof
