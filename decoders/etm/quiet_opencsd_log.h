#pragma once
// OpenCSD keeps its last error in one process-wide logger that every decode tree writes: while
// several trees decode at once it must not store errors (a decoder error sends a decode in pieces
// back to one piece anyway, where the message is read). Also the hexadecimal offsets the decodes
// in pieces name in their reasons.
#include <cinttypes>
#include <cstdio>
#include <string>

#include <opencsd/c_api/opencsd_c_api.h>

namespace ptprof::etm {

class QuietOpenCsdLog {
 public:
  QuietOpenCsdLog() { ocsd_def_errlog_init(OCSD_ERR_SEV_NONE, 0); }
  ~QuietOpenCsdLog() { Restore(); }
  QuietOpenCsdLog(const QuietOpenCsdLog&) = delete;
  QuietOpenCsdLog& operator=(const QuietOpenCsdLog&) = delete;
  void Restore() {
    if (restored_) return;
    ocsd_def_errlog_init(OCSD_ERR_SEV_ERROR, 0);  // OpenCSD's own default
    restored_ = true;
  }

 private:
  bool restored_ = false;
};

inline std::string HexOffset(uint64_t value) {
  char text[24];
  std::snprintf(text, sizeof text, "%#" PRIx64, value);
  return text;
}

}  // namespace ptprof::etm
