#include "src/record/triggers/trigger_spec.h"

#include <csignal>
#include <cstring>

#include <fmt/format.h>

#include "src/record/triggers/syscall_names.h"

namespace ptprof::record::triggers {

namespace {

// A number with an optional fraction at `text`: the value times `scale` (integer, exact to 1e-9).
struct Number {
  uint64_t whole = 0;
  uint64_t frac = 0;         // fraction digits as an integer
  uint64_t frac_scale = 1;   // 10^digits
  size_t length = 0;         // characters consumed
};

Number ReadNumber(std::string_view text, bool fraction) {
  Number n;
  size_t i = 0;
  while (i < text.size() && text[i] >= '0' && text[i] <= '9' && n.whole < UINT64_MAX / 100)
    n.whole = n.whole * 10 + static_cast<uint64_t>(text[i++] - '0');
  if (fraction && i > 0 && i < text.size() && text[i] == '.') {
    ++i;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9' && n.frac_scale < 1000000000) {
      n.frac = n.frac * 10 + static_cast<uint64_t>(text[i++] - '0');
      n.frac_scale *= 10;
    }
  }
  n.length = i;
  return n;
}

// Parses a duration at the start of `text`; `column` is where `text` starts (1-based) for errors.
Result<uint64_t> DurationAt(std::string_view text, std::string_view what, size_t column) {
  Number n = ReadNumber(text, true);
  if (n.length == 0)
    return Fail(fmt::format("{}: column {}: expected a duration like 200us, 1ms, 2s", what, column));
  std::string_view unit = text.substr(n.length);
  uint64_t scale = 0;
  if (unit == "ns") scale = 1;
  else if (unit == "us") scale = 1000;
  else if (unit == "ms") scale = 1000000;
  else if (unit == "s") scale = 1000000000;
  if (scale == 0)
    return Fail(fmt::format("{}: column {}: unit '{}' is not one of ns, us, ms, s", what,
                            column + n.length, unit));
  if (n.whole > UINT64_MAX / scale)
    return Fail(fmt::format("{}: column {}: duration too large", what, column));
  return n.whole * scale + n.frac * scale / n.frac_scale;
}

int SignalNumberOf(std::string_view name) {
  if (name.substr(0, 3) == "SIG") name.remove_prefix(3);
  static const std::pair<std::string_view, int> kSignals[] = {
      {"USR1", SIGUSR1}, {"USR2", SIGUSR2}, {"HUP", SIGHUP},   {"INT", SIGINT},
      {"QUIT", SIGQUIT}, {"TERM", SIGTERM}, {"ALRM", SIGALRM}, {"PROF", SIGPROF},
      {"WINCH", SIGWINCH}, {"CONT", SIGCONT}};
  for (const auto& [n, number] : kSignals)
    if (name == n) return number;
  return 0;
}

// NAME[,NAME] starting at `column`; an empty list is an error.
Result<std::vector<uint64_t>> SyscallList(std::string_view list, std::string_view what,
                                          size_t column) {
  std::vector<uint64_t> numbers;
  size_t at = 0;
  while (true) {
    size_t end = list.find(',', at);
    if (end == std::string_view::npos) end = list.size();
    std::string_view name = list.substr(at, end - at);
    auto number = SyscallNumberOf(name);
    if (!number)
      return Fail(fmt::format("{}: column {}: unknown syscall '{}'{}", what, column + at, name,
                              SyscallHint(name)));
    numbers.push_back(*number);
    if (end == list.size()) break;
    at = end + 1;
  }
  return numbers;
}

}  // namespace

Result<uint64_t> ParseDuration(std::string_view text, std::string_view what) {
  return DurationAt(text, what, 1);
}

Result<uint64_t> ParseSize(std::string_view text, std::string_view what) {
  Number n = ReadNumber(text, false);
  if (n.length == 0)
    return Fail(fmt::format("{}: column 1: expected a size like 4096, 64K, 4M", what));
  std::string_view unit = text.substr(n.length);
  if (unit.size() > 1 && (unit.substr(1) == "iB" || unit.substr(1) == "B")) unit = unit.substr(0, 1);
  uint64_t scale = 0;
  if (unit.empty() || unit == "B") scale = 1;
  else if (unit == "K" || unit == "k") scale = 1ull << 10;
  else if (unit == "M" || unit == "m") scale = 1ull << 20;
  else if (unit == "G" || unit == "g") scale = 1ull << 30;
  if (scale == 0)
    return Fail(fmt::format("{}: column {}: unit '{}' is not one of K, M, G", what, n.length + 1,
                            unit));
  if (n.whole > UINT64_MAX / scale)
    return Fail(fmt::format("{}: column 1: size too large", what));
  return n.whole * scale;
}

std::string FormatDuration(uint64_t ns) {
  if (ns != 0 && ns % 1000000000 == 0) return fmt::format("{}s", ns / 1000000000);
  if (ns != 0 && ns % 1000000 == 0) return fmt::format("{}ms", ns / 1000000);
  if (ns != 0 && ns % 1000 == 0) return fmt::format("{}us", ns / 1000);
  return fmt::format("{}ns", ns);
}

Result<TriggerSpec> ParseTrigger(std::string_view text) {
  const std::string what = fmt::format("--snapshot-on '{}'", text);
  TriggerSpec spec;
  spec.text = std::string(text);
  auto starts = [&](std::string_view key) { return text.substr(0, key.size()) == key; };
  if (starts("syscall-latency>")) {
    spec.kind = TriggerKind::kSyscallLatency;
    const size_t at = std::strlen("syscall-latency>");
    std::string_view rest = text.substr(at);
    const size_t colon = rest.find(':');
    auto ns = DurationAt(rest.substr(0, colon), what, at + 1);
    if (!ns) return tl::unexpected(ns.error());
    if (*ns == 0) return Fail(fmt::format("{}: column {}: the latency must be > 0", what, at + 1));
    spec.latency_ns = *ns;
    if (colon != std::string_view::npos) {
      auto list = SyscallList(rest.substr(colon + 1), what, at + colon + 2);
      if (!list) return tl::unexpected(list.error());
      spec.syscalls = std::move(*list);
    }
    return spec;
  }
  const size_t eq = text.find('=');
  if (eq == std::string_view::npos || eq == 0)
    return Fail(fmt::format("{}: column 1: expected syscall=NAME, syscall-latency>DURATION[:NAME], "
                            "addr=SYMBOL|0xADDR, signal=USR2, every=DURATION or insns=N", what));
  const std::string_view key = text.substr(0, eq);
  const std::string_view value = text.substr(eq + 1);
  const size_t column = eq + 2;
  if (value.empty()) return Fail(fmt::format("{}: column {}: missing value after '='", what, column));
  if (key == "syscall") {
    spec.kind = TriggerKind::kSyscall;
    auto list = SyscallList(value, what, column);
    if (!list) return tl::unexpected(list.error());
    spec.syscalls = std::move(*list);
  } else if (key == "addr") {
    spec.kind = TriggerKind::kAddress;
    if (value.substr(0, 2) == "0x" || value.substr(0, 2) == "0X") {
      std::string_view digits = value.substr(2);
      if (digits.empty() || digits.size() > 16 ||
          digits.find_first_not_of("0123456789abcdefABCDEF") != std::string_view::npos)
        return Fail(fmt::format("{}: column {}: bad hexadecimal address", what, column));
      spec.address = std::stoull(std::string(digits), nullptr, 16);
    } else {
      if (value.find_first_of(" \t,:") != std::string_view::npos)
        return Fail(fmt::format("{}: column {}: a symbol name has no spaces, commas or colons",
                                what, column + value.find_first_of(" \t,:")));
      spec.symbol = std::string(value);
    }
  } else if (key == "signal") {
    spec.kind = TriggerKind::kSignal;
    spec.signal = SignalNumberOf(value);
    if (spec.signal == 0)
      return Fail(fmt::format("{}: column {}: unknown signal '{}' (USR1, USR2, HUP, ...)", what,
                              column, value));
  } else if (key == "every") {
    spec.kind = TriggerKind::kEvery;
    auto ns = DurationAt(value, what, column);
    if (!ns) return tl::unexpected(ns.error());
    if (*ns == 0) return Fail(fmt::format("{}: column {}: the period must be > 0", what, column));
    spec.period_ns = *ns;
  } else if (key == "insns") {
    spec.kind = TriggerKind::kInsns;
    Number n = ReadNumber(value, false);
    if (n.length != value.size() || n.whole == 0)
      return Fail(fmt::format("{}: column {}: expected insns=N with N > 0", what, column));
    spec.insns = n.whole;
  } else {
    return Fail(fmt::format("{}: column 1: unknown trigger '{}' (syscall, syscall-latency, addr, "
                            "signal, every, insns)", what, key));
  }
  return spec;
}

}  // namespace ptprof::record::triggers
