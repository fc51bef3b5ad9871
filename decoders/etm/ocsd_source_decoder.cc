#include "decoders/etm/ocsd_source_decoder.h"

namespace ptprof::etm {

namespace {

ocsd_arch_version_t ArchOf(ArchVersion v) {
  switch (v) {
    case ArchVersion::kV7: return ARCH_V7;
    case ArchVersion::kV8: return ARCH_V8;
    case ArchVersion::kV8r3: return ARCH_V8r3;
    case ArchVersion::kAA64: return ARCH_AA64;
    default: return ARCH_UNKNOWN;
  }
}

ocsd_core_profile_t ProfileOf(CoreProfile p) {
  switch (p) {
    case CoreProfile::kA: return profile_CortexA;
    case CoreProfile::kR: return profile_CortexR;
    case CoreProfile::kM: return profile_CortexM;
    default: return profile_Unknown;
  }
}

// ETMv4 and ETE share these registers (each takes a few more of its own).
template <class Config>
void FillEtmV4Registers(const SourceConfig& s, Config& cfg) {
  cfg.reg_idr0 = s.Reg("TRCIDR0");
  cfg.reg_idr1 = s.Reg("TRCIDR1");
  cfg.reg_idr2 = s.Reg("TRCIDR2");
  cfg.reg_idr8 = s.Reg("TRCIDR8");
  cfg.reg_configr = s.Reg("TRCCONFIGR");
  cfg.reg_traceidr = s.Reg("TRCTRACEIDR");
  cfg.arch_ver = ArchOf(s.arch.arch);
  cfg.core_prof = ProfileOf(s.arch.profile);
}

// ETMv3 and PTM take the same registers (ETMIDR, ETMCR, ETMCCER, ETMTRACEIDR) in the same fields.
template <class Config>
void FillEtmV3Registers(const SourceConfig& s, Config& cfg) {
  cfg.reg_idr = s.Reg("ETMIDR");
  cfg.reg_ctrl = s.Reg("ETMCR");
  cfg.reg_ccer = s.Reg("ETMCCER");
  cfg.reg_trc_id = s.Reg("ETMTRACEIDR");
  cfg.arch_ver = ArchOf(s.arch.arch);
  cfg.core_prof = ProfileOf(s.arch.profile);
}

}  // namespace

Result<uint8_t> AddOcsdDecoder(dcd_tree_handle_t tree, const SourceConfig& s, int flags) {
  const char* name = nullptr;
  ocsd_etmv4_cfg v4{};
  ocsd_ete_cfg ete{};
  ocsd_etmv3_cfg v3{};
  ocsd_ptm_cfg ptm{};
  ocsd_stm_cfg stm{};
  const void* cfg = nullptr;
  switch (s.protocol) {
    case Protocol::kEtmV4:
      FillEtmV4Registers(s, v4);
      v4.reg_idr9 = s.Reg("TRCIDR9");
      v4.reg_idr10 = s.Reg("TRCIDR10");
      v4.reg_idr11 = s.Reg("TRCIDR11");
      v4.reg_idr12 = s.Reg("TRCIDR12");
      v4.reg_idr13 = s.Reg("TRCIDR13");
      name = OCSD_BUILTIN_DCD_ETMV4I;
      cfg = &v4;
      break;
    case Protocol::kEte:
      FillEtmV4Registers(s, ete);
      ete.reg_devarch = s.Reg("TRCDEVARCH");
      name = OCSD_BUILTIN_DCD_ETE;
      cfg = &ete;
      break;
    case Protocol::kEtmV3:
      FillEtmV3Registers(s, v3);
      name = OCSD_BUILTIN_DCD_ETMV3;
      cfg = &v3;
      break;
    case Protocol::kPtm:
      FillEtmV3Registers(s, ptm);
      name = OCSD_BUILTIN_DCD_PTM;
      cfg = &ptm;
      break;
    case Protocol::kStm:
      stm.reg_tcsr = s.Reg("STMTCSR");
      stm.reg_feat3r = 0x10000;  // 65536 masters: every master ID is accepted
      stm.reg_devid = 0x10000;   // 65536 channels per master
      stm.hw_event = HwEvent_Unknown_Disabled;
      name = OCSD_BUILTIN_DCD_STM;
      cfg = &stm;
      break;
  }
  uint8_t id = 0;
  ocsd_err_t err = ocsd_dt_create_decoder(tree, name, flags, cfg, &id);
  if (err != OCSD_OK)
    return Fail("OpenCSD: cannot create the " + std::string(ProtocolName(s.protocol)) +
                " decoder for source " + s.source + ": " + OcsdLastError(err));
  return id;
}

ocsd_trace_protocol_t OcsdProtocolOf(Protocol p) {
  switch (p) {
    case Protocol::kEtmV3: return OCSD_PROTOCOL_ETMV3;
    case Protocol::kPtm: return OCSD_PROTOCOL_PTM;
    case Protocol::kEtmV4: return OCSD_PROTOCOL_ETMV4I;
    case Protocol::kEte: return OCSD_PROTOCOL_ETE;
    case Protocol::kStm: return OCSD_PROTOCOL_STM;
  }
  return OCSD_PROTOCOL_UNKNOWN;
}

std::string OcsdLastError(ocsd_err_t fallback) {
  char msg[512] = {};
  ocsd_trc_index_t index = 0;
  uint8_t chan = 0;
  ocsd_err_t err = ocsd_get_last_err(&index, &chan, msg, sizeof msg);
  if (msg[0] != '\0') {
    std::string s = msg;
    while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
    return s;
  }
  char buf[256] = {};
  ocsd_err_str(err != OCSD_OK ? err : fallback, buf, sizeof buf);
  return buf;
}

}  // namespace ptprof::etm
