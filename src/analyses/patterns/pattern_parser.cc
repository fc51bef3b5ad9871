#include "src/analyses/patterns/pattern_parser.h"

#include <cctype>
#include <optional>

namespace ptprof::patterns {

namespace {

struct ClassName {
  std::string_view name;
  std::vector<OperandKind> kinds;
};

const std::vector<ClassName>& OperandClasses() {
  static const std::vector<ClassName> classes = {
      {"r8", {OperandKind::kReg8}},
      {"r16", {OperandKind::kReg16}},
      {"r32", {OperandKind::kReg32}},
      {"r64", {OperandKind::kReg64}},
      {"reg", {OperandKind::kReg8, OperandKind::kReg16, OperandKind::kReg32, OperandKind::kReg64}},
      {"imm", {OperandKind::kImm}},
      {"mem", {OperandKind::kMem}},
      {"xmm", {OperandKind::kXmm}},
      {"ymm", {OperandKind::kYmm}},
      {"zmm", {OperandKind::kZmm}},
      {"vec", {OperandKind::kXmm, OperandKind::kYmm, OperandKind::kZmm}},
      {"x87", {OperandKind::kX87}},
  };
  return classes;
}

bool IsMnemonicChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '*';
}

// A cursor over the definition with column-accurate failures.
class Parser {
 public:
  Parser(const std::string& name, std::string_view text) : name_(name), text_(text) {}

  Result<Pattern> Run() {
    Pattern pattern;
    pattern.name = name_;
    pattern.definition = std::string(text_);
    for (;;) {
      auto alternative = ParseAlternative();
      if (!alternative) return tl::unexpected(alternative.error());
      pattern.alternatives.push_back(std::move(*alternative));
      SkipBlanks();
      if (AtEnd()) break;
      if (Peek() != '|') return Error("expected '|', ';' or ',' here, found '" + Rest() + "'");
      ++pos_;
    }
    return pattern;
  }

 private:
  Result<Alternative> ParseAlternative() {
    Alternative alternative;
    SkipBlanks();
    size_t start = pos_;
    uint32_t max_between = 0;
    for (;;) {
      auto element = ParseElement();
      if (!element) return tl::unexpected(element.error());
      alternative.steps.push_back({std::move(*element), max_between});
      SkipBlanks();
      if (AtEnd() || Peek() != ';') break;
      ++pos_;
      SkipBlanks();
      max_between = 0;
      if (!AtEnd() && Peek() == '{') {
        ++pos_;
        SkipBlanks();
        size_t digits = pos_;
        uint64_t n = 0;
        while (!AtEnd() && std::isdigit(static_cast<unsigned char>(Peek()))) {
          n = n * 10 + static_cast<uint64_t>(Peek() - '0');
          if (n > 1000000) return Error("the bound after ';' is at most 1000000", digits);
          ++pos_;
        }
        if (pos_ == digits) return Error("expected the number of instructions allowed between, as ;{N}");
        SkipBlanks();
        if (AtEnd() || Peek() != '}') return Error("expected '}' to close ;{N}");
        ++pos_;
        max_between = static_cast<uint32_t>(n);
      }
    }
    alternative.text = Trimmed(text_.substr(start, pos_ - start));
    return alternative;
  }

  Result<ElementPattern> ParseElement() {
    ElementPattern element;
    SkipBlanks();
    size_t start = pos_;
    if (AtEnd() || Peek() == '|' || Peek() == ';')
      return Error("expected an instruction (a mnemonic or bytes:...)");
    for (;;) {
      if (Take("kernel:")) {
        element.privilege = Privilege::kKernel;
      } else if (Take("user:")) {
        element.privilege = Privilege::kUser;
      } else {
        break;
      }
      SkipBlanks();
    }
    if (Take("bytes:")) {
      auto status = ParseBytes(element);
      if (!status) return tl::unexpected(status.error());
    } else {
      size_t mnemonic_start = pos_;
      while (!AtEnd() && IsMnemonicChar(Peek()))
        element.mnemonic.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(Peek())))),
            ++pos_;
      if (element.mnemonic.empty())
        return Error("expected a mnemonic, found '" + Rest() + "'", mnemonic_start);
      if (!AtEnd() && Peek() == ':')
        return Error("unknown qualifier '" + element.mnemonic + ":' (kernel:, user: or bytes:)",
                     mnemonic_start);
      if (!AtEnd() && !std::isspace(static_cast<unsigned char>(Peek())) && !AtSeparator())
        return Error(std::string("unexpected character '") + Peek() + "' in a mnemonic");
      SkipBlanks();
      if (!AtEnd() && !AtSeparator()) {
        element.operands_given = true;
        for (;;) {
          auto operand = ParseOperand();
          if (!operand) return tl::unexpected(operand.error());
          element.operands.push_back(std::move(*operand));
          SkipBlanks();
          if (AtEnd() || Peek() != ',') break;
          ++pos_;
        }
        if (!AtEnd() && !AtSeparator())
          return Error("expected ',', ';' or '|' after an operand, found '" + Rest() + "'");
      }
    }
    element.text = Trimmed(text_.substr(start, pos_ - start));
    return element;
  }

  Status ParseBytes(ElementPattern& element) {
    for (;;) {
      SkipBlanks();
      if (AtEnd() || AtSeparator()) break;
      if (pos_ + 1 >= text_.size() || !IsByteChar(text_[pos_]) || !IsByteChar(text_[pos_ + 1]))
        return Error("expected a byte as two hex digits or ??");
      std::string_view byte = text_.substr(pos_, 2);
      if (pos_ + 2 < text_.size() && IsByteChar(text_[pos_ + 2]))
        return Error("expected a byte as two hex digits or ??, separated by blanks");
      if (byte == "??") {
        element.bytes.push_back(std::nullopt);
      } else if (byte.find('?') != std::string_view::npos) {
        return Error("a byte is two hex digits or ?? (no half wildcards)");
      } else {
        element.bytes.push_back(static_cast<uint8_t>(*ParseNumber("0x" + std::string(byte))));
      }
      pos_ += 2;
    }
    if (element.bytes.empty()) return Error("expected at least one byte after bytes:");
    if (element.bytes.size() > 15) return Error("an instruction has at most 15 bytes");
    return {};
  }

  Result<OperandPattern> ParseOperand() {
    SkipBlanks();
    size_t start = pos_;
    int depth = 0;
    while (!AtEnd()) {
      char c = Peek();
      if (c == '[' || c == '(') ++depth;
      if (c == ']' || c == ')') --depth;
      if (depth <= 0 && (c == ',' || c == ';' || c == '|')) break;
      ++pos_;
    }
    if (depth > 0) return Error("unclosed '[' in an operand", start);
    std::string text = Trimmed(text_.substr(start, pos_ - start));
    if (text.empty()) return Error("expected an operand", start);
    OperandPattern operand;
    if (text == "*") {
      operand.kind = OperandPattern::Kind::kAny;
      return operand;
    }
    if (text == "...") {
      operand.kind = OperandPattern::Kind::kAnyRun;
      return operand;
    }
    for (const ClassName& cls : OperandClasses()) {
      if (text == cls.name) {
        operand.kind = OperandPattern::Kind::kClass;
        operand.classes = cls.kinds;
        return operand;
      }
    }
    if (text.find('*') != std::string::npos)
      return Error("'*' stands for a whole operand, not part of one", start);
    operand.kind = OperandPattern::Kind::kLiteral;
    operand.literal = NormaliseOperand(text);
    return operand;
  }

  static bool IsByteChar(char c) { return std::isxdigit(static_cast<unsigned char>(c)) || c == '?'; }
  bool AtEnd() const { return pos_ >= text_.size(); }
  char Peek() const { return text_[pos_]; }
  bool AtSeparator() const { return Peek() == ';' || Peek() == '|'; }
  void SkipBlanks() {
    while (!AtEnd() && std::isspace(static_cast<unsigned char>(Peek()))) ++pos_;
  }
  bool Take(std::string_view word) {
    if (text_.substr(pos_, word.size()) != word) return false;
    pos_ += word.size();
    return true;
  }
  std::string Rest() const {
    std::string rest(text_.substr(pos_, 12));
    return rest;
  }
  static std::string Trimmed(std::string_view s) {
    size_t b = s.find_first_not_of(" \t\n");
    if (b == std::string_view::npos) return {};
    size_t e = s.find_last_not_of(" \t\n");
    return std::string(s.substr(b, e - b + 1));
  }
  tl::unexpected<ptprof::Error> Error(const std::string& what) const { return Error(what, pos_); }
  tl::unexpected<ptprof::Error> Error(const std::string& what, size_t at) const {
    return Fail("pattern " + name_ + ": column " + std::to_string(at + 1) + ": " + what);
  }

  const std::string& name_;
  std::string_view text_;
  size_t pos_ = 0;
};

}  // namespace

bool IsPatternName(std::string_view name) {
  if (name.empty() || !(std::isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_'))
    return false;
  for (char c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  return true;
}

Result<Pattern> ParsePattern(const std::string& name, std::string_view text) {
  return Parser(name, text).Run();
}

}  // namespace ptprof::patterns
