#include "decoders/pt/pt_params.h"

#include <cerrno>
#include <cstdlib>

namespace ptprof::pt {

Result<uint64_t> ParseUnsigned(const std::string& text, const std::string& field, uint64_t max) {
  if (text.empty() || text[0] == '-' || text[0] == '+')
    return Fail(field + ": expected an unsigned number, got '" + text + "'");
  errno = 0;
  char* end = nullptr;
  unsigned long long value = std::strtoull(text.c_str(), &end, 0);
  if (errno != 0 || end == text.c_str() || *end != '\0')
    return Fail(field + ": expected an unsigned number, got '" + text + "'");
  if (value > max)
    return Fail(field + ": " + text + " is out of range (at most " + std::to_string(max) + ")");
  return static_cast<uint64_t>(value);
}

Status ParseCpu(const std::string& text, const std::string& field, PtParams& params) {
  if (text == "none") {
    params.cpu.reset();
    params.cpu_auto = false;
    return {};
  }
  if (text == "auto") {
    params.cpu.reset();
    params.cpu_auto = true;
    return {};
  }
  // F/M[/S], each part decimal.
  PtCpu cpu;
  unsigned long parts[3] = {0, 0, 0};
  int count = 0;
  const char* p = text.c_str();
  while (count < 3) {
    if (*p < '0' || *p > '9') break;
    char* end = nullptr;
    errno = 0;
    parts[count++] = std::strtoul(p, &end, 10);
    if (errno != 0) break;
    p = end;
    if (*p == '/') {
      ++p;
      continue;
    }
    break;
  }
  if (*p != '\0' || count < 2 || parts[0] > UINT16_MAX || parts[1] > UINT8_MAX ||
      parts[2] > UINT8_MAX)
    return Fail(field + ": expected FAMILY/MODEL[/STEPPING], 'none' or 'auto', got '" + text + "'");
  cpu.family = static_cast<uint16_t>(parts[0]);
  cpu.model = static_cast<uint8_t>(parts[1]);
  cpu.stepping = static_cast<uint8_t>(parts[2]);
  params.cpu = cpu;
  params.cpu_auto = false;
  return {};
}

Status ParseAddressFilter(const std::string& text, PtParams& params) {
  auto bad = [&] {
    return Fail("--addr-filter " + text + ": expected N:CFG:FROM-TO (N 0-3, CFG 0-15)");
  };
  const size_t first = text.find(':');
  const size_t second = first == std::string::npos ? first : text.find(':', first + 1);
  if (second == std::string::npos) return bad();
  const size_t dash = text.find('-', second + 1);
  if (dash == std::string::npos) return bad();
  auto n = ParseUnsigned(text.substr(0, first), "--addr-filter", 3);
  auto cfg = ParseUnsigned(text.substr(first + 1, second - first - 1), "--addr-filter", 15);
  auto from = ParseUnsigned(text.substr(second + 1, dash - second - 1), "--addr-filter", UINT64_MAX);
  auto to = ParseUnsigned(text.substr(dash + 1), "--addr-filter", UINT64_MAX);
  if (!n || !cfg || !from || !to) return bad();
  params.filter[*n] = AddrFilter{static_cast<uint8_t>(*cfg), *from, *to};
  return {};
}

}  // namespace ptprof::pt
