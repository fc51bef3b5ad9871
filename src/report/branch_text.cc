#include "src/report/branch_text.h"

#include <cstring>

#include "src/model/json_text.h"

namespace ptprof {

void AppendSampleHeader(std::string& out, const BranchSampleHead& head) {
  auto number = [&](const char* label, uint64_t value) {
    out += label;
    AppendDecimal(out, value);
  };
  number("sample ", head.sample);
  number(": pid ", head.pid);
  number(" tid ", head.tid);
  if (head.cpu >= 0) number(" cpu ", static_cast<uint64_t>(head.cpu));
  if (head.time_ns) number(" time ", head.time_ns);
  out += " offset ";
  AppendHexAddress(out, head.trace_offset);
  number(", ", head.records);
  out += " records\n";
}

namespace {

// A line built in a buffer of its own and appended at once: these run once per record.
class LineBuilder {
 public:
  template <size_t N>
  void Put(const char (&text)[N]) {
    std::memcpy(end_, text, N - 1);
    end_ += N - 1;
  }
  void Hex(uint64_t value) { end_ += PutHexAddress(end_, value); }
  void AppendTo(std::string& out) const { out.append(buf_, static_cast<size_t>(end_ - buf_)); }

 private:
  char buf_[80];
  char* end_ = buf_;
};

}  // namespace

void AppendRecordText(std::string& out, const BranchRecord& record,
                      const std::function<std::string(uint64_t)>& symbolize) {
  LineBuilder line;
  line.Put("  ");
  line.Hex(record.from);
  line.Put(" -> ");
  line.Hex(record.to);
  const bool plain = !symbolize && !record.has_mispred && !record.has_cycles;
  if (plain) line.Put("\n");
  line.AppendTo(out);
  if (plain) return;
  if (symbolize) {
    const std::string from = symbolize(record.from), to = symbolize(record.to);
    if (!from.empty() || !to.empty()) {
      out += "  ";
      out += from.empty() ? "?" : from;
      out += " -> ";
      out += to.empty() ? "?" : to;
    }
  }
  if (record.has_mispred) out += record.mispred ? "  mispred" : "  pred";
  if (record.has_cycles) {
    out += "  cycles ";
    AppendDecimal(out, record.cycles);
  }
  out += '\n';
}

void AppendRecordJsonHead(std::string& out, const BranchRecord& record) {
  LineBuilder line;
  line.Put("{\"from\":\"");
  line.Hex(record.from);
  line.Put("\",\"to\":\"");
  line.Hex(record.to);
  line.Put("\",\"sample\":");
  line.AppendTo(out);
}

void AppendRecordJsonTail(std::string& out, uint64_t sample, const BranchRecord& record) {
  AppendDecimal(out, sample);
  if (record.has_cycles) {
    out += ",\"cycles\":";
    AppendDecimal(out, record.cycles);
  }
  if (record.has_mispred) out += record.mispred ? ",\"mispred\":true" : ",\"mispred\":false";
  out += "}\n";
}

}  // namespace ptprof
