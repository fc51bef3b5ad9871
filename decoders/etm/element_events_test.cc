#include "decoders/etm/element_events.h"

#include <catch2/catch.hpp>

using namespace ptprof;
using namespace ptprof::etm;

TEST_CASE("an instruction range becomes an ExecBlock") {
  ocsd_generic_trace_elem e;
  ocsd_gen_elem_init(&e, OCSD_GEN_TRC_ELEM_INSTR_RANGE);
  e.st_addr = 0x1000;
  e.en_addr = 0x1010;
  e.num_instr_range = 4;
  e.last_instr_sz = 4;
  e.last_instr_exec = 1;
  e.isa = ocsd_isa_aarch64;
  e.last_i_type = OCSD_INSTR_BR;
  e.last_i_subtype = OCSD_S_INSTR_BR_LINK;
  ElementTranslator t(std::map<uint8_t, int32_t>{{0x10, 2}});
  TraceEvent ev = t.Translate(e, 37, 0x10);
  const auto* b = std::get_if<ExecBlock>(&ev.body);
  REQUIRE(b);
  CHECK(b->first_ip == 0x1000);
  CHECK(b->last_ip == 0x100c);
  CHECK(b->insns == 4);
  CHECK(b->mode == ExecMode::kA64);
  CHECK(b->end == BlockEnd::kCall);
  CHECK(ev.header.cpu == 2);
  CHECK(ev.header.offset == 37);
  e.last_instr_exec = 0;
  e.last_instr_cond = 1;
  e.last_i_subtype = OCSD_S_INSTR_NONE;
  CHECK(BlockEndOf(e) == BlockEnd::kCondNotTaken);
  e.last_i_type = OCSD_INSTR_BR_INDIRECT;
  e.last_i_subtype = OCSD_S_INSTR_V8_RET;
  e.last_instr_exec = 1;
  CHECK(BlockEndOf(e) == BlockEnd::kReturn);
}

TEST_CASE("exceptions, contexts, timestamps and gaps are translated") {
  ElementTranslator t(std::map<uint8_t, int32_t>{});
  ocsd_generic_trace_elem e;
  ocsd_gen_elem_init(&e, OCSD_GEN_TRC_ELEM_EXCEPTION);
  e.exception_number = 0x18;
  e.en_addr = 0x2000;
  e.excep_ret_addr = 1;
  auto ex = std::get<Exception>(t.Translate(e, 0, 1).body);
  CHECK(ex.number == 0x18);
  CHECK(ex.return_ip == 0x2000);
  CHECK(ex.has_return_ip);

  ocsd_gen_elem_init(&e, OCSD_GEN_TRC_ELEM_PE_CONTEXT);
  e.isa = ocsd_isa_thumb2;
  e.context.security_level = ocsd_sec_secure;
  e.context.exception_level = ocsd_EL1;
  e.context.el_valid = 1;
  e.context.context_id = 42;
  e.context.ctxt_id_valid = 1;
  auto pe = std::get<PeContext>(t.Translate(e, 0, 1).body);
  CHECK(pe.mode == ExecMode::kT32);
  CHECK(pe.exception_level == 1);
  CHECK(pe.security == PeContext::Security::kSecure);
  CHECK(pe.has_context_id);
  CHECK(!pe.has_vmid);

  ocsd_gen_elem_init(&e, OCSD_GEN_TRC_ELEM_TIMESTAMP);
  e.timestamp = 0x2f150c0;
  TraceEvent ts = t.Translate(e, 59, 1);
  CHECK(std::get<Marker>(ts.body).kind == Marker::Kind::kTimestamp);
  CHECK(ts.header.tsc == 0x2f150c0);
  ocsd_gen_elem_init(&e, OCSD_GEN_TRC_ELEM_ADDR_NACC);
  e.st_addr = 0xffff0000;
  TraceEvent nacc = t.Translate(e, 60, 1);
  CHECK(nacc.header.tsc == 0x2f150c0);  // later events of the same source carry the timestamp
  CHECK(std::get<TraceGap>(nacc.body).reason == GapReason::kNoImage);
  CHECK(std::get<TraceGap>(nacc.body).ip == 0xffff0000);

  ocsd_gen_elem_init(&e, OCSD_GEN_TRC_ELEM_NO_SYNC);
  e.unsync_eot_info = UNSYNC_OVERFLOW;
  CHECK(std::get<TraceGap>(t.Translate(e, 0, 1).body).reason == GapReason::kOverflow);
}

TEST_CASE("a PE context keeps only the IDs OpenCSD says are valid") {
  ocsd_generic_trace_elem e;
  ocsd_gen_elem_init(&e, OCSD_GEN_TRC_ELEM_PE_CONTEXT);
  e.context.ctxt_id_valid = 0;
  e.context.context_id = 0xdeadbeef;  // what OpenCSD may leave there
  e.context.vmid_valid = 1;
  e.context.vmid = 7;
  ElementTranslator t({});
  TraceEvent ev = t.Translate(e, 0, 0x10);
  const auto* c = std::get_if<PeContext>(&ev.body);
  REQUIRE(c);
  CHECK_FALSE(c->has_context_id);
  CHECK(c->context_id == 0);
  CHECK(c->has_vmid);
  CHECK(c->vmid == 7);
}
