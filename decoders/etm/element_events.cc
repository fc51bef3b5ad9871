#include "decoders/etm/element_events.h"

#include <cstring>
#include <type_traits>

#include <cinttypes>
#include <cstdio>
#include <string_view>

namespace ptprof::etm {

namespace {

std::string Hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%" PRIx64, v);
  return buf;
}

const char* UnsyncReason(unsync_info_t info) {
  switch (info) {
    case UNSYNC_INIT_DECODER: return "init-decoder";
    case UNSYNC_RESET_DECODER: return "reset-decoder";
    case UNSYNC_OVERFLOW: return "overflow";
    case UNSYNC_DISCARD: return "discard";
    case UNSYNC_BAD_PACKET: return "bad-packet";
    case UNSYNC_EOT: return "end-of-trace";
    default: return "unknown";
  }
}

// The detail of a "no sync" gap starts with this; UnsyncReason says why.
constexpr std::string_view kNoSync = "no sync: ";

TraceGap Gap(GapReason reason, std::string detail) {
  TraceGap g;
  g.reason = reason;
  g.detail = std::move(detail);
  return g;
}

Marker MarkerOf(Marker::Kind kind, uint64_t value, std::string label = {}) {
  Marker m;
  m.kind = kind;
  m.value = value;
  m.label = std::move(label);
  return m;
}

}  // namespace

ExecMode ModeOfIsa(const ocsd_isa& isa) {
  // Read as a number: OpenCSD leaves the field unset in some elements of damaged trace (found by
  // tools/fuzz.sh etm), and loading such a value as the enum is undefined behaviour.
  std::underlying_type_t<ocsd_isa> value;
  std::memcpy(&value, &isa, sizeof value);
  switch (value) {
    case ocsd_isa_arm: return ExecMode::kA32;
    case ocsd_isa_thumb2: return ExecMode::kT32;
    case ocsd_isa_aarch64: return ExecMode::kA64;
    default: return ExecMode::kUnknown;
  }
}

BlockEnd BlockEndOf(const ocsd_generic_trace_elem& r) {
  bool executed = r.last_instr_exec;
  switch (r.last_i_type) {
    case OCSD_INSTR_BR:
      if (!executed) return BlockEnd::kCondNotTaken;
      if (r.last_i_subtype == OCSD_S_INSTR_BR_LINK) return BlockEnd::kCall;
      return r.last_instr_cond ? BlockEnd::kCondTaken : BlockEnd::kJump;
    case OCSD_INSTR_BR_INDIRECT:
      if (!executed) return BlockEnd::kCondNotTaken;
      switch (r.last_i_subtype) {
        case OCSD_S_INSTR_BR_LINK: return BlockEnd::kCall;
        case OCSD_S_INSTR_V8_RET:
        case OCSD_S_INSTR_V7_IMPLIED_RET: return BlockEnd::kReturn;
        case OCSD_S_INSTR_V8_ERET: return BlockEnd::kIret;
        default: return r.last_instr_cond ? BlockEnd::kCondTaken : BlockEnd::kJump;
      }
    default:
      // Ranges end at a non-branch when an exception, a trace stop or a barrier waypoint follows.
      return BlockEnd::kUnknown;
  }
}

bool IsNoSync(const TraceEvent& event) {
  const auto* gap = std::get_if<TraceGap>(&event.body);
  return gap && gap->detail.starts_with(kNoSync);
}

bool IsDecoderStart(const TraceEvent& event) {
  return IsNoSync(event) && std::get<TraceGap>(event.body).detail.substr(kNoSync.size()) ==
                                UnsyncReason(UNSYNC_INIT_DECODER);
}

bool IsEndOfTrace(const TraceEvent& event) {
  const auto* marker = std::get_if<Marker>(&event.body);
  return marker && marker->kind == Marker::Kind::kEndOfTrace;
}

TraceEvent ElementTranslator::Translate(const ocsd_generic_trace_elem& e, uint64_t index,
                                        uint8_t trace_id) {
  if (e.elem_type == OCSD_GEN_TRC_ELEM_TIMESTAMP) {
    timestamp_of_trace_id_[trace_id] = e.timestamp;
    has_timestamp_.set(trace_id);
  }
  TraceEvent ev;
  ev.header.offset = index;
  ev.header.cpu = cpu_of_trace_id_[trace_id];
  ev.header.tsc = has_timestamp_.test(trace_id) ? timestamp_of_trace_id_[trace_id] : kUnknownTime;

  switch (e.elem_type) {
    case OCSD_GEN_TRC_ELEM_INSTR_RANGE: {
      ExecBlock b;
      b.first_ip = e.st_addr;
      b.last_insn_size = static_cast<uint8_t>(e.last_instr_sz);
      b.last_ip = e.en_addr - e.last_instr_sz;
      b.insns = e.num_instr_range;
      b.mode = ModeOfIsa(e.isa);
      b.end = BlockEndOf(e);
      ev.body = b;
      break;
    }
    case OCSD_GEN_TRC_ELEM_I_RANGE_NOPATH: {
      TraceGap g = Gap(GapReason::kNoPath, "range without path: " +
                                               std::to_string(e.num_instr_range) +
                                               " instructions up to " + Hex(e.en_addr));
      g.ip = e.st_addr;
      g.has_ip = true;
      ev.body = g;
      break;
    }
    case OCSD_GEN_TRC_ELEM_NO_SYNC:
      ev.body = Gap(e.unsync_eot_info == UNSYNC_OVERFLOW ? GapReason::kOverflow : GapReason::kDesync,
                    std::string(kNoSync) + UnsyncReason(e.unsync_eot_info));
      break;
    case OCSD_GEN_TRC_ELEM_ADDR_NACC: {
      TraceGap g = Gap(GapReason::kNoImage, "memory not accessible");
      g.ip = e.st_addr;
      g.has_ip = true;
      ev.body = g;
      break;
    }
    case OCSD_GEN_TRC_ELEM_ADDR_UNKNOWN:
      ev.body = Gap(GapReason::kOther, "address unknown");
      break;
    case OCSD_GEN_TRC_ELEM_TRACE_ON:
      ev.body = TraceToggle{TraceToggle::Kind::kEnabled, 0, false};
      break;
    case OCSD_GEN_TRC_ELEM_EO_TRACE:
      ev.body = MarkerOf(Marker::Kind::kEndOfTrace, 0, UnsyncReason(e.unsync_eot_info));
      break;
    case OCSD_GEN_TRC_ELEM_PE_CONTEXT: {
      PeContext c;
      c.mode = ModeOfIsa(e.isa);
      c.exception_level = e.context.el_valid ? static_cast<int8_t>(e.context.exception_level) : -1;
      switch (e.context.security_level) {
        case ocsd_sec_secure: c.security = PeContext::Security::kSecure; break;
        case ocsd_sec_root: c.security = PeContext::Security::kRoot; break;
        case ocsd_sec_realm: c.security = PeContext::Security::kRealm; break;
        default: c.security = PeContext::Security::kNonSecure; break;
      }
      c.is_64bit = e.context.bits64;
      // OpenCSD leaves an ID it was not given uninitialised: only a valid one is kept.
      c.has_context_id = e.context.ctxt_id_valid;
      c.context_id = c.has_context_id ? e.context.context_id : 0;
      c.has_vmid = e.context.vmid_valid;
      c.vmid = c.has_vmid ? e.context.vmid : 0;
      ev.body = c;
      break;
    }
    case OCSD_GEN_TRC_ELEM_EXCEPTION: {
      Exception x;
      x.number = e.exception_number;
      x.return_ip = e.en_addr;
      x.has_return_ip = e.excep_ret_addr;
      ev.body = x;
      break;
    }
    case OCSD_GEN_TRC_ELEM_EXCEPTION_RET: {
      Exception x;
      x.kind = Exception::Kind::kReturn;
      ev.body = x;
      break;
    }
    case OCSD_GEN_TRC_ELEM_TIMESTAMP:
      ev.body = MarkerOf(Marker::Kind::kTimestamp, e.timestamp);
      break;
    case OCSD_GEN_TRC_ELEM_CYCLE_COUNT:
      ev.body = MarkerOf(Marker::Kind::kCycleCount, e.cycle_count);
      break;
    case OCSD_GEN_TRC_ELEM_EVENT:
      ev.body = MarkerOf(Marker::Kind::kEvent, e.trace_event.ev_number,
                         e.trace_event.ev_type == 1 ? "trigger" : "numbered");
      break;
    case OCSD_GEN_TRC_ELEM_SWTRACE: {
      uint64_t payload = 0;
      if (e.ptr_extended_data && e.sw_trace_info.swt_payload_pkt_bitsize > 0) {
        unsigned bytes = (e.sw_trace_info.swt_payload_pkt_bitsize + 7) / 8;
        if (bytes > 8) bytes = 8;
        const auto* p = static_cast<const uint8_t*>(e.ptr_extended_data);
        for (unsigned i = 0; i < bytes; ++i) payload |= static_cast<uint64_t>(p[i]) << (8 * i);
      }
      char label[64];
      std::snprintf(label, sizeof label, "master 0x%x channel 0x%x",
                    static_cast<unsigned>(e.sw_trace_info.swt_master_id),
                    static_cast<unsigned>(e.sw_trace_info.swt_channel_id));
      ev.body = MarkerOf(Marker::Kind::kSwTrace, payload, label);
      break;
    }
    case OCSD_GEN_TRC_ELEM_SYNC_MARKER:
      ev.body = MarkerOf(Marker::Kind::kSyncMarker, e.sync_marker.value);
      break;
    case OCSD_GEN_TRC_ELEM_MEMTRANS:
      switch (e.mem_trans) {
        case OCSD_MEM_TRANS_COMMIT: ev.body = MarkerOf(Marker::Kind::kTsxCommit, 0); break;
        case OCSD_MEM_TRANS_FAIL: ev.body = MarkerOf(Marker::Kind::kTsxAbort, 0); break;
        case OCSD_MEM_TRANS_TRACE_INIT:
          ev.body = MarkerOf(Marker::Kind::kTsxBegin, 0, "trace started inside a transaction");
          break;
        default: ev.body = MarkerOf(Marker::Kind::kTsxBegin, 0); break;
      }
      break;
    default:
      ev.body = Gap(GapReason::kOther, "unknown trace element " + std::to_string(e.elem_type));
      break;
  }
  return ev;
}

}  // namespace ptprof::etm
