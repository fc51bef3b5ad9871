#pragma once
// SpilledText answers "where does a report writer's text go as it is made?": into one string that
// goes to a file a megabyte at a time when there is one (a large program's call tree is tens to
// hundreds of MB of text), else is kept whole for the caller. Shared by the call-tree writers
// (text table, folded stacks, JSON).
#include <cstdio>
#include <string>

namespace ptprof {

class SpilledText {
 public:
  explicit SpilledText(std::FILE* file) : file_(file) {}

  std::string& text() { return text_; }
  // Writes the text out once a megabyte is waiting (with a file).
  void Spill() {
    if (file_ && text_.size() >= kSpillBytes) Flush();
  }
  // Writes out what is waiting (with a file); the capacity stays for the next megabyte.
  void Flush() {
    if (!file_ || text_.empty()) return;
    std::fwrite(text_.data(), 1, text_.size(), file_);
    text_.clear();
  }

 private:
  static constexpr size_t kSpillBytes = size_t{1} << 20;
  std::FILE* file_;
  std::string text_;
};

}  // namespace ptprof
