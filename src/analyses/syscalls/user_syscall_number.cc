#include "src/analyses/syscalls/user_syscall_number.h"

#include <array>
#include <cctype>
#include <set>
#include <string>
#include <vector>

namespace ptprof::syscalls {

namespace {

constexpr size_t kMaxBlockBytes = 4096;

std::vector<std::string> Tokens(const std::string& text) {
  std::vector<std::string> tokens;
  std::string token;
  for (char c : text) {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      token += c;
    } else if (!token.empty()) {
      tokens.push_back(token);
      token.clear();
    }
  }
  if (!token.empty()) tokens.push_back(token);
  return tokens;
}

// Whether an instruction may read or write rax without naming it (or names it).
bool TouchesRax(const std::vector<std::string>& tokens) {
  static const std::set<std::string> kRax = {"rax", "eax", "ax", "al", "ah"};
  static const std::set<std::string> kImplicit = {
      "mul", "imul", "div", "idiv", "cpuid", "rdtsc", "rdtscp", "cdqe", "cwde", "cbw", "cqo",
      "cdq", "cwd", "lodsb", "lodsw", "lodsd", "lodsq", "stosb", "stosw", "stosd", "stosq",
      "scasb", "scasw", "scasd", "scasq", "cmpxchg", "cmpxchg8b", "cmpxchg16b", "rdpid",
      "xgetbv", "rdmsr", "rdpmc", "in", "out", "lahf", "sahf", "call", "syscall", "int",
      "xlat", "xlatb", "enter", "leave", "pushf", "popf", "pushfq", "popfq", "rep", "repne",
      "repe"};
  if (tokens.empty()) return true;
  if (kImplicit.count(tokens[0])) return true;
  for (const std::string& token : tokens)
    if (kRax.count(token)) return true;
  return false;
}

// eax's value after `bytes` when it is an immediate load of eax/rax.
std::optional<uint32_t> ImmediateLoad(const uint8_t* bytes, size_t length) {
  auto imm32 = [bytes](size_t at) {
    return static_cast<uint32_t>(bytes[at]) | static_cast<uint32_t>(bytes[at + 1]) << 8 |
           static_cast<uint32_t>(bytes[at + 2]) << 16 | static_cast<uint32_t>(bytes[at + 3]) << 24;
  };
  if (length == 5 && bytes[0] == 0xb8) return imm32(1);                       // mov eax, imm32
  if (length == 7 && bytes[0] == 0x48 && bytes[1] == 0xc7 && bytes[2] == 0xc0)  // mov rax, imm32
    return imm32(3);
  if (length == 10 && bytes[0] == 0x48 && bytes[1] == 0xb8) return imm32(2);  // movabs rax
  if (length == 2 && (bytes[0] == 0x31 || bytes[0] == 0x33) && bytes[1] == 0xc0) return 0u;
  if (length == 3 && bytes[0] == 0x48 && (bytes[1] == 0x31 || bytes[1] == 0x33) && bytes[2] == 0xc0)
    return 0u;
  return std::nullopt;
}

}  // namespace

std::optional<uint32_t> SyscallNumberInCode(const X86Decoder& decoder, const uint8_t* code,
                                            size_t size, uint64_t first_ip, uint64_t syscall_ip) {
  if (syscall_ip < first_ip || syscall_ip - first_ip >= size) return std::nullopt;
  std::optional<uint32_t> value;  // eax as far as the code says, after each instruction
  size_t at = 0;
  const size_t end = syscall_ip - first_ip;
  while (at < end) {
    auto insn = decoder.Decode(code + at, size - at, ExecMode::k64Bit);
    if (!insn || insn->length == 0) return std::nullopt;
    if (auto load = ImmediateLoad(code + at, insn->length)) {
      value = load;
    } else {
      auto text = decoder.Format(code + at, size - at, ExecMode::k64Bit, first_ip + at);
      if (!text) return std::nullopt;
      if (TouchesRax(Tokens(*text))) value.reset();
    }
    at += insn->length;
  }
  if (at != end) return std::nullopt;  // the block's instructions do not end at the syscall
  auto last = decoder.Decode(code + end, size - end, ExecMode::k64Bit);
  if (!last || last->kind != X86Kind::kSyscall) return std::nullopt;
  return value;
}

std::optional<uint32_t> UserSyscallNumber(const ImageSet& images, const X86Decoder& decoder,
                                          uint64_t block_first_ip, uint64_t syscall_ip) {
  if (syscall_ip < block_first_ip || syscall_ip - block_first_ip > kMaxBlockBytes)
    return std::nullopt;
  std::vector<uint8_t> code(syscall_ip - block_first_ip + 15);
  const size_t read = images.Read(block_first_ip, code.data(), code.size());
  if (read < syscall_ip - block_first_ip + 2) return std::nullopt;
  return SyscallNumberInCode(decoder, code.data(), read, block_first_ip, syscall_ip);
}

}  // namespace ptprof::syscalls
