#include "decoders/pt/pevent_record_text.h"

#include <fmt/format.h>

#include "sideband/perf/perf_abi.h"

namespace ptprof::pt {

namespace {

// Compact and verbose forms of one record. Fields are listed once, as (verbose name, value);
// the compact form has its own layout per record type.
struct RecordForms {
  std::string compact;
  std::string verbose;
};

RecordForms Describe(const PeventEntry& entry) {
  const perf::PerfRecord& r = entry.record;
  const uint32_t type = r.header.type;
  const uint16_t misc = r.header.misc;
  RecordForms f;
  auto field = [&f](std::string_view name, const std::string& value) {
    f.verbose += fmt::format("\n  {}: {}", name, value);
  };
  auto hex = [](uint64_t v) { return fmt::format("{:x}", v); };
  switch (type) {
    case perf::kRecordMmap:
    case perf::kRecordMmap2: {
      const auto& m = std::get<perf::MmapRecord>(r.body);
      if (type == perf::kRecordMmap) {
        f.compact = fmt::format("PERF_RECORD_MMAP  {:x}/{:x}, {:x}, {:x}, {:x}, {}", m.pid, m.tid, m.addr, m.len,
                                m.pgoff, m.filename);
        f.verbose = "PERF_RECORD_MMAP";
      } else {
        f.compact = fmt::format("PERF_RECORD_MMAP2  {:x}/{:x}, {:x}, {:x}, {:x}, {:x}, {:x}, {:x}, {:x}, {:x}, {:x}, {}",
                                m.pid, m.tid, m.addr, m.len, m.pgoff, m.maj, m.min, m.ino, m.ino_generation,
                                m.prot, m.flags, m.filename);
        f.verbose = "PERF_RECORD_MMAP2";
      }
      field("pid", hex(m.pid));
      field("tid", hex(m.tid));
      field("addr", hex(m.addr));
      field("len", hex(m.len));
      field("pgoff", hex(m.pgoff));
      if (type == perf::kRecordMmap2) {
        field("maj", hex(m.maj));
        field("min", hex(m.min));
        field("ino", hex(m.ino));
        field("ino_generation", hex(m.ino_generation));
        field("prot", hex(m.prot));
        field("flags", hex(m.flags));
      }
      field("filename", m.filename);
      break;
    }
    case perf::kRecordLost: {
      const auto& l = std::get<perf::LostRecord>(r.body);
      f.compact = fmt::format("PERF_RECORD_LOST  {:x}, {:x}", l.id, l.lost);
      f.verbose = "PERF_RECORD_LOST";
      field("id", hex(l.id));
      field("lost", hex(l.lost));
      break;
    }
    case perf::kRecordComm: {
      const auto& c = std::get<perf::CommRecord>(r.body);
      const char* sfx = c.exec ? ".EXEC" : "";
      f.compact = fmt::format("PERF_RECORD_COMM{}  {:x}/{:x}, {}", sfx, c.pid, c.tid, c.comm);
      f.verbose = fmt::format("PERF_RECORD_COMM{}", sfx);
      field("pid", hex(c.pid));
      field("tid", hex(c.tid));
      field("comm", c.comm);
      break;
    }
    case perf::kRecordExit:
    case perf::kRecordFork: {
      const auto& t = std::get<perf::TaskRecord>(r.body);
      const char* name = type == perf::kRecordFork ? "PERF_RECORD_FORK" : "PERF_RECORD_EXIT";
      f.compact = fmt::format("{}  {:x}/{:x}, {:x}/{:x}, {:x}", name, t.pid, t.tid, t.ppid, t.ptid, t.time);
      f.verbose = name;
      field("pid", hex(t.pid));
      field("ppid", hex(t.ppid));
      field("tid", hex(t.tid));
      field("ptid", hex(t.ptid));
      field("time", hex(t.time));
      break;
    }
    case perf::kRecordThrottle:
    case perf::kRecordUnthrottle: {
      const auto& w = *entry.throttle;
      const char* name = type == perf::kRecordThrottle ? "PERF_RECORD_THROTTLE" : "PERF_RECORD_UNTHROTTLE";
      f.compact = fmt::format("{}  {:x}, {:x}, {:x}", name, w[0], w[1], w[2]);
      f.verbose = name;
      field("time", hex(w[0]));
      field("id", hex(w[1]));
      field("stream_id", hex(w[2]));
      break;
    }
    case perf::kRecordAux: {
      const auto& a = std::get<perf::AuxRecord>(r.body);
      const char* sfx = (a.flags & perf::kAuxFlagTruncated) ? ".TRUNCATED" : "";
      f.compact = fmt::format("PERF_RECORD_AUX{}  {:x}, {:x}, {:x}", sfx, a.aux_offset, a.aux_size, a.flags);
      f.verbose = fmt::format("PERF_RECORD_AUX{}", sfx);
      field("aux offset", hex(a.aux_offset));
      field("aux size", hex(a.aux_size));
      field("flags", hex(a.flags));
      break;
    }
    case perf::kRecordItraceStart: {
      const auto& s = std::get<perf::ItraceStartRecord>(r.body);
      f.compact = fmt::format("PERF_RECORD_ITRACE_START  {:x}/{:x}", s.pid, s.tid);
      f.verbose = "PERF_RECORD_ITRACE_START";
      field("pid", hex(s.pid));
      field("tid", hex(s.tid));
      break;
    }
    case perf::kRecordLostSamples: {
      const auto& l = std::get<perf::LostSamplesRecord>(r.body);
      f.compact = fmt::format("PERF_RECORD_LOST_SAMPLES  {:x}", l.lost);
      f.verbose = "PERF_RECORD_LOST_SAMPLES";
      field("lost", hex(l.lost));
      break;
    }
    case perf::kRecordSwitch:
      f.compact = f.verbose = (misc & perf::kMiscSwitchOut) ? "PERF_RECORD_SWITCH.OUT" : "PERF_RECORD_SWITCH.IN";
      break;
    case perf::kRecordSwitchCpuWide: {
      const auto& s = std::get<perf::SwitchRecord>(r.body);
      const bool out = misc & perf::kMiscSwitchOut;
      f.compact = fmt::format("PERF_RECORD_SWITCH_CPU_WIDE.{}  {:x}/{:x}", out ? "OUT" : "IN", s.next_prev_pid,
                              s.next_prev_tid);
      f.verbose = fmt::format("PERF_RECORD_SWITCH_CPU_WIDE.{}", out ? "OUT" : "IN");
      field(out ? "next pid" : "prev pid", hex(s.next_prev_pid));
      field(out ? "next tid" : "prev tid", hex(s.next_prev_tid));
      break;
    }
    default:
      f.compact = fmt::format("UNKNOWN ({:x}, {:x})", type, misc);
      f.verbose = fmt::format("UNKNOWN\n  type: {:x}\n  misc: {:x}", type, misc);
      break;
  }
  return f;
}

std::string CompactSamples(const perf::SampleId& s) {
  std::string out = "  {";
  if (s.pid && s.tid) out += fmt::format(" {:x}/{:x}", *s.pid, *s.tid);
  if (s.time) out += fmt::format(" {:x}", *s.time);
  if (s.id) out += fmt::format(" {:x}", *s.id);
  if (s.cpu) out += fmt::format(" cpu-{:x}", *s.cpu);
  if (s.stream_id) out += fmt::format(" {:x}", *s.stream_id);
  if (s.identifier) out += fmt::format(" {:x}", *s.identifier);
  return out + " }";
}

std::string VerboseSamples(const perf::SampleId& s) {
  std::string out;
  if (s.pid && s.tid) out += fmt::format("\n  pid: {:x}\n  tid: {:x}", *s.pid, *s.tid);
  if (s.time) out += fmt::format("\n  time: {:x}", *s.time);
  if (s.id) out += fmt::format("\n  id: {:x}", *s.id);
  if (s.cpu) out += fmt::format("\n  cpu: {:x}", *s.cpu);
  if (s.stream_id) out += fmt::format("\n  stream id: {:x}", *s.stream_id);
  if (s.identifier) out += fmt::format("\n  identifier: {:x}", *s.identifier);
  return out;
}

}  // namespace

std::string PeventRecordText(const PeventEntry& entry, const std::string& filename, uint64_t sample_type,
                             const SidebandPrintFlags& flags) {
  if (!flags.any()) return {};
  std::string out;
  if (flags.filename && flags.offset)
    out += fmt::format("{}:{:016x}  ", filename, entry.offset);
  else if (flags.filename)
    out += filename + "  ";
  else if (flags.offset)
    out += fmt::format("{:016x}  ", entry.offset);
  if (flags.time && entry.has_time) out += fmt::format("{:016x}  ", entry.tsc);
  if (flags.compact || flags.verbose) {
    const RecordForms forms = Describe(entry);
    out += flags.compact ? forms.compact : forms.verbose;
    // libipt prints the sample fields whenever a sample type is configured; a record of a type it
    // does not know has none, which leaves "{ }" in the compact form.
    if (sample_type != 0)
      out += flags.compact ? CompactSamples(entry.record.sample_id) : VerboseSamples(entry.record.sample_id);
  }
  return out + "\n";
}

void PrintDueRecords(PeventQueue& queue, uint64_t tsc, const SidebandPrintFlags& flags,
                     const std::function<void(std::string_view)>& emit) {
  while (PeventSource* source = queue.PopDue(tsc)) {
    const std::string text =
        PeventRecordText(source->current(), source->filename(), source->config().sample_type, flags);
    if (!text.empty()) emit(text);
    source->Advance();
    queue.Requeue(source);
  }
}

}  // namespace ptprof::pt
