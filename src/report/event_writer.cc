#include "src/report/event_writer.h"

#include <charconv>
#include <cinttypes>
#include <cstdarg>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "src/model/json_text.h"

namespace ptprof {

namespace {

template <class... Ts>
struct Overloaded : Ts... {
  using Ts::operator()...;
};
template <class... Ts>
Overloaded(Ts...) -> Overloaded<Ts...>;

// JSON is built by appending to one buffer: no temporary strings per field, one fwrite per line.
class JsonLine {
 public:
  explicit JsonLine(std::string& out) : out_(out) {}
  void Open() { out_ += '{'; }
  void Close() { out_ += "}\n"; }
  void Key(const char* key) {
    if (out_.back() != '{') out_ += ',';
    out_ += '"';
    out_ += key;
    out_ += "\":";
  }
  void String(const char* key, const char* value) {
    Key(key);
    out_ += '"';
    out_ += value;
    out_ += '"';
  }
  void Escaped(const char* key, const std::string& value) {
    Key(key);
    out_ += JsonString(value);
  }
  void Address(const char* key, uint64_t value) {
    Key(key);
    out_ += '"';
    AppendHexAddress(out_, value);
    out_ += '"';
  }
  void Number(const char* key, uint64_t value) {
    Key(key);
    AppendDecimal(out_, value);
  }
  void SignedNumber(const char* key, int64_t value) {
    Key(key);
    out_ += std::to_string(value);
  }
  void True(const char* key) {
    Key(key);
    out_ += "true";
  }
  // Fields already spelled, with their leading comma.
  void Raw(const char* text, size_t size) { out_.append(text, size); }

 private:
  std::string& out_;
};

// The header fields every record shares: cpu (when known), time, tsc, pid/tid, after the
// record's first field. Built in a buffer and appended at once: this runs for every block.
void AppendHeader(JsonLine& j, const EventHeader& h) {
  char buf[160];
  char* p = buf;
  auto field = [&]<size_t N>(const char (&key)[N], auto value, bool known) {
    if (!known) return;
    std::memcpy(p, key, N - 1);  // ,"name":
    p = std::to_chars(p + N - 1, buf + sizeof buf, value).ptr;
  };
  field(",\"cpu\":", h.cpu, h.cpu != kUnknownId);
  field(",\"time\":", h.time_ns, h.time_ns != kUnknownTime);
  field(",\"tsc\":", h.tsc, h.tsc != kUnknownTime);
  field(",\"pid\":", h.pid, h.pid != kUnknownId);
  field(",\"tid\":", h.tid, h.tid != kUnknownId);
  j.Raw(buf, static_cast<size_t>(p - buf));
}

// printf's format appended to `out` (text lines that are not kept whole).
[[gnu::format(printf, 2, 3)]] void AppendFormat(std::string& out, const char* format, ...) {
  char buf[256];
  va_list args;
  va_start(args, format);
  const int size = std::vsnprintf(buf, sizeof buf, format, args);
  va_end(args);
  if (size < 0) return;
  if (static_cast<size_t>(size) < sizeof buf) {
    out.append(buf, static_cast<size_t>(size));
    return;
  }
  const size_t at = out.size();
  out.resize(at + static_cast<size_t>(size) + 1);
  va_start(args, format);
  std::vsnprintf(&out[at], static_cast<size_t>(size) + 1, format, args);
  va_end(args);
  out.resize(at + static_cast<size_t>(size));
}

bool IsArmMode(ExecMode mode) {
  return mode == ExecMode::kA32 || mode == ExecMode::kT32 || mode == ExecMode::kA64;
}

// A block's record is its head, which depends on the block alone (a writer keeps the heads of
// the blocks met last), then its tail: the header fields and the end time.
void AppendBlockHead(JsonLine& j, const ExecBlock& b) {
  j.Address("first_ip", b.first_ip);
  j.Address("last_ip", b.last_ip);
  j.Number("insns", b.insns);
  j.String("exit", BlockEndName(b.end));
  if (IsArmMode(b.mode)) {  // Arm blocks say their ISA; x86 records stay as they were
    j.String("isa", ExecModeName(b.mode));
    j.Number("last_size", b.last_insn_size);
  }
  if (b.speculative) j.True("speculative");
}
void AppendBlockTail(JsonLine& j, const EventHeader& h, const ExecBlock& b) {
  AppendHeader(j, h);
  if (b.end_time_ns != kUnknownTime) j.Number("end_time", b.end_time_ns);
}

// What an instruction's text line (without its cpu and time) is made from: its address, bytes,
// size and mode.
LineCache::Key InstructionKey(const Instruction& i) {
  uint64_t low = 0, high = 0;
  std::memcpy(&low, i.bytes, 8);
  std::memcpy(&high, i.bytes + 8, 7);
  return {i.ip, low, high | uint64_t{i.size} << 56 | uint64_t{static_cast<uint8_t>(i.mode)} << 60};
}

// An instruction's record up to its header fields, which depends on the instruction alone.
void AppendInstructionHead(JsonLine& j, const Instruction& i) {
  j.Address("ip", i.ip);
  j.Number("size", i.size);
  j.String("iclass", InsnClassName(i.iclass));
  if (i.speculative) j.True("speculative");
}

// What a block's head is made from.
LineCache::Key BlockKey(const ExecBlock& b) {
  return {b.first_ip, b.last_ip,
          uint64_t{b.insns} << 32 | uint64_t{static_cast<uint8_t>(b.end)} << 24 |
              uint64_t{static_cast<uint8_t>(b.mode)} << 16 | uint64_t{b.last_insn_size} << 8 |
              uint64_t{b.speculative}};
}

// The Arm markers whose value is a count or number rather than an address.
bool MarkerHasNumber(Marker::Kind kind) {
  switch (kind) {
    case Marker::Kind::kTimestamp:
    case Marker::Kind::kCycleCount:
    case Marker::Kind::kEvent:
    case Marker::Kind::kSwTrace:
    case Marker::Kind::kSyncMarker: return true;
    default: return false;
  }
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

void AppendEventJson(std::string& out, const TraceEvent& event) {
  JsonLine j(out);
  j.Open();
  auto ip = [&](bool has_ip, uint64_t value) {
    if (has_ip) j.Address("ip", value);
  };
  std::visit(
      Overloaded{
          [&](const ExecBlock& b) {
            AppendBlockHead(j, b);
            AppendBlockTail(j, event.header, b);
          },
          [&](const Instruction& i) {
            AppendInstructionHead(j, i);
            AppendHeader(j, event.header);
          },
          [&](const TraceGap& g) {
            j.String("event", "gap");
            j.String("reason", GapReasonName(g.reason));
            ip(g.has_ip, g.ip);
            j.Number("offset", event.header.offset);
            if (!g.detail.empty()) j.Escaped("detail", g.detail);
            AppendHeader(j, event.header);
          },
          [&](const TraceToggle& t) {
            j.String("event", EventName(event));
            ip(t.has_ip, t.ip);
            AppendHeader(j, event.header);
          },
          [&](const ModeChange& m) {
            j.String("event", "exec_mode");
            j.String("mode", ExecModeName(m.mode));
            ip(m.has_ip, m.ip);
            AppendHeader(j, event.header);
          },
          [&](const ContextSwitch& c) {
            j.String("event", EventName(event));
            if (c.kind != ContextSwitch::Kind::kSideband) j.Address("value", c.value);
            if (c.next_pid != kUnknownId) j.SignedNumber("next_pid", c.next_pid);
            if (c.next_tid != kUnknownId) j.SignedNumber("next_tid", c.next_tid);
            ip(c.has_ip, c.ip);
            AppendHeader(j, event.header);
          },
          [&](const PowerEvent& p) {
            j.String("event", EventName(event));
            j.Number("value", p.value);
            ip(p.has_ip, p.ip);
            AppendHeader(j, event.header);
          },
          [&](const Marker& m) {
            j.String("event", EventName(event));
            if (m.kind == Marker::Kind::kPtwrite) j.Address("value", m.value);
            if (MarkerHasNumber(m.kind)) j.Number("value", m.value);
            if (!m.label.empty()) j.Escaped("label", m.label);
            ip(m.has_ip, m.ip);
            AppendHeader(j, event.header);
          },
          [&](const Exception& e) {
            j.String("event", EventName(event));
            if (e.kind == Exception::Kind::kTaken) j.Number("number", e.number);
            if (e.has_return_ip) j.Address("return_ip", e.return_ip);
            AppendHeader(j, event.header);
          },
          [&](const PeContext& c) {
            j.String("event", "pe_context");
            j.String("isa", ExecModeName(c.mode));
            if (c.exception_level >= 0) j.Number("el", static_cast<uint64_t>(c.exception_level));
            j.String("security", SecurityName(c.security));
            j.Number("bits", c.is_64bit ? 64 : 32);
            if (c.has_context_id) j.Number("context_id", c.context_id);
            if (c.has_vmid) j.Number("vmid", c.vmid);
            AppendHeader(j, event.header);
          },
      },
      event.body);
  j.Close();
}

std::string EventToJson(const TraceEvent& event) {
  std::string s;
  AppendEventJson(s, event);
  s.pop_back();  // the newline
  return s;
}

struct EventWriter::Spares {
  SparePool<std::unique_ptr<KeptLines>> caches;
  SparePool<std::string> buffers;  // emptied, their capacity kept
};

EventWriter::EventWriter(std::FILE* out, EventWriterOptions options)
    : out_(out), options_(std::move(options)), spares_(std::make_shared<Spares>()) {}

EventWriter::~EventWriter() { Flush(); }

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
  if (buffer_.size() >= kFlushBytes) Flush();
}

void EventWriter::OnBlocks(const BlockBatch& batch) {
  ExecBlock b;
  for (size_t i = 0; i < batch.blocks.size(); ++i) {
    UnpackExecBlock(batch.blocks[i], b);
    WriteBlock(batch.HeaderOf(i), b);
    if (buffer_.size() >= kFlushBytes) Flush();
  }
}

void EventWriter::WriteBlock(const EventHeader& h, const ExecBlock& b) {
  if (options_.format == EventFormat::kText) {
    WriteTextPrefix(h);
    buffer_ += lines_->blocks.Line(BlockKey(b), [&](std::string& text) {
      AppendFormat(text, "%016" PRIx64 "..%016" PRIx64 "  %6u insns  %-14s ", b.first_ip,
                   b.last_ip, b.insns, BlockEndName(b.end));
      text += Symbol(b.first_ip);
      text += '\n';
    });
    return;
  }
  buffer_ += lines_->blocks.Line(BlockKey(b), [&](std::string& head) {
    JsonLine j(head);
    j.Open();
    AppendBlockHead(j, b);
  });
  // Blocks in a row mostly share their header (the same tsc, pid and tid): its spelling is kept.
  if (b.end_time_ns == kUnknownTime) {
    if (!(h.cpu == tail_.cpu && h.time_ns == tail_.time_ns && h.tsc == tail_.tsc && h.pid == tail_.pid &&
          h.tid == tail_.tid) ||
        tail_text_.empty()) {
      tail_ = h;
      tail_text_.clear();
      JsonLine j(tail_text_);
      AppendHeader(j, h);
      j.Close();
    }
    buffer_ += tail_text_;
    return;
  }
  JsonLine j(buffer_);
  AppendBlockTail(j, h, b);
  j.Close();
}

void EventWriter::WriteJsonl(const TraceEvent& event) {
  if (const auto* b = std::get_if<ExecBlock>(&event.body)) {
    WriteBlock(event.header, *b);
  } else if (const auto* i = std::get_if<Instruction>(&event.body)) {
    const LineCache::Key key{i->ip, i->size, uint64_t{static_cast<uint8_t>(i->iclass)} << 8 | i->speculative};
    buffer_ += lines_->instructions.Line(key, [&](std::string& head) {
      JsonLine j(head);
      j.Open();
      AppendInstructionHead(j, *i);
    });
    JsonLine j(buffer_);
    AppendHeader(j, event.header);
    j.Close();
  } else {
    AppendEventJson(buffer_, event);
  }
}

void EventWriter::Flush() {
  if (buffer_.empty()) return;
  if (spill_) {
    spill_->push_back(std::move(buffer_));
    buffer_ = spares_->buffers.Take([] {
      std::string buffer;
      buffer.reserve(kFlushBytes + 1024);
      return buffer;
    });
    return;
  }
  std::fwrite(buffer_.data(), 1, buffer_.size(), out_);
  buffer_.clear();
}

void EventWriter::WriteTextPrefix(const EventHeader& h) {
  if (options_.show_cpu && h.cpu != kUnknownId) {
    char buf[24] = "cpu";
    char* end = std::to_chars(buf + 3, buf + sizeof buf - 2, h.cpu).ptr;
    *end++ = ' ';
    *end++ = ' ';
    buffer_.append(buf, static_cast<size_t>(end - buf));
  }
  if (h.time_ns != kUnknownTime) {
    AppendPaddedDecimal(buffer_, h.time_ns, 14);
    buffer_.append("  ", 2);
  }
}

void EventWriter::WriteText(const TraceEvent& event) {
  if (const auto* b = std::get_if<ExecBlock>(&event.body)) {
    WriteBlock(event.header, *b);
    return;
  }
  WriteTextPrefix(event.header);
  std::visit(
      Overloaded{
          [&](const ExecBlock&) {},  // WriteBlock's
          [&](const Instruction& i) {
            buffer_ += lines_->instructions.Line(InstructionKey(i), [&](std::string& text) {
              const std::string dis = options_.disassemble ? options_.disassemble(i) : std::string();
              AppendFormat(text, "%016" PRIx64 "  %-40s ", i.ip, dis.c_str());
              text += Symbol(i.ip);
              text += '\n';
            });
          },
          [&](const TraceGap& g) {
            AppendFormat(buffer_, "[gap: %s at offset 0x%" PRIx64, GapReasonName(g.reason), event.header.offset);
            if (g.has_ip) {
              const std::string sym = Symbol(g.ip);
              AppendFormat(buffer_, ", ip 0x%" PRIx64 "%s%s", g.ip, sym.empty() ? "" : " ", sym.c_str());
            }
            if (!g.detail.empty()) {
              buffer_ += ": ";
              buffer_ += g.detail;
            }
            buffer_ += "]\n";
          },
          [&](const auto&) {
            buffer_ += '[';
            buffer_ += EventText(event);
            buffer_ += "]\n";
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
            if (m.kind == Marker::Kind::kPtwrite || m.kind == Marker::Kind::kMaintenance ||
                MarkerHasNumber(m.kind)) {
              std::snprintf(buf, sizeof buf, " 0x%" PRIx64, m.value);
              text += buf;
            }
            if (!m.label.empty()) text += " " + m.label;
            has_ip = m.has_ip;
            ip = m.ip;
          },
          [&](const Exception& e) {
            if (e.kind == Exception::Kind::kTaken) {
              std::snprintf(buf, sizeof buf, " number 0x%x", e.number);
              text += buf;
            }
            has_ip = e.has_return_ip;
            ip = e.return_ip;
          },
          [&](const PeContext& c) {
            text += std::string(" ") + ExecModeName(c.mode);
            if (c.exception_level >= 0) text += " EL" + std::to_string(c.exception_level);
            text += std::string(" ") + SecurityName(c.security);
            text += c.is_64bit ? " 64-bit" : " 32-bit";
            if (c.has_context_id) {
              std::snprintf(buf, sizeof buf, " context_id 0x%x", c.context_id);
              text += buf;
            }
            if (c.has_vmid) {
              std::snprintf(buf, sizeof buf, " vmid 0x%x", c.vmid);
              text += buf;
            }
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

void EventWriter::OnEnd() {
  Flush();
  if (out_) std::fflush(out_);
}

// A part of a writer in parts: the same writer, whose full buffers are kept in order (moved,
// not copied) until the fold writes them out. Its cache of lines comes from the parts before.
class WriterPart : public EventSink {
 public:
  explicit WriterPart(const EventWriter& whole) : writer_(nullptr, whole.options_) {
    writer_.spares_ = whole.spares_;
    writer_.spill_ = &chunks_;
    writer_.lines_ = whole.spares_->caches.Take([] { return std::make_unique<EventWriter::KeptLines>(); });
  }
  ~WriterPart() override { writer_.spares_->caches.Give(std::move(writer_.lines_)); }
  void OnEvent(const TraceEvent& event) override { writer_.OnEvent(event); }
  void OnBlocks(const BlockBatch& batch) override { writer_.OnBlocks(batch); }
  void OnEnd() override { writer_.OnEnd(); }
  // Its text, once OnEnd has flushed it.
  std::vector<std::string>& chunks() { return chunks_; }

 private:
  std::vector<std::string> chunks_;
  EventWriter writer_;
};

std::unique_ptr<EventSink> EventWriter::NewPart() const {
  return std::make_unique<WriterPart>(*this);
}

void EventWriter::Fold(std::unique_ptr<EventSink> part) {
  auto& written = static_cast<WriterPart&>(*part);
  written.OnEnd();  // flushed already when the decode ended it; harmless again
  Flush();
  for (const std::string& chunk : written.chunks()) std::fwrite(chunk.data(), 1, chunk.size(), out_);
  // The buffers go back for the next parts, all of them (at most what the parts waiting to be
  // folded hold at once), so that the next parts write into memory already in use.
  for (std::string& chunk : written.chunks()) {
    chunk.clear();
    spares_->buffers.Give(std::move(chunk));
  }
}

}  // namespace ptprof
