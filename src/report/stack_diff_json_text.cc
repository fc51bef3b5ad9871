#include "src/report/stack_diff_json_text.h"

#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "src/report/printed_json_string.h"
#include "src/report/spilled_text.h"

namespace ptprof {

namespace {

using stackdiff::PathDiff;
using stackdiff::StackDiff;

// Appends text[from, to) (a part of a value dump(1) printed alone) as the printer prints it two
// levels down, as an element of the top object's array: a line break is followed by two more
// spaces of indent (a string holds no raw line break).
void AppendTwoDown(std::string& out, const std::string& text, size_t from, size_t to) {
  for (size_t at = text.find('\n', from); at < to; at = text.find('\n', from)) {
    out.append(text, from, at + 1 - from);
    out += "  ";
    from = at + 1;
  }
  out.append(text, from, to - from);
}

// Where the null of `place` (a member the caller set to null, "\"key\": null", to write its
// value itself) begins in `printed`.
size_t NullOf(const std::string& printed, const std::string& place) {
  const size_t at = printed.find(place);
  if (at == std::string::npos) throw std::logic_error("WriteStackDiffJson: no " + place);
  return at + place.size() - 4;
}

class PathsWriter {
 public:
  PathsWriter(const StackDiff& diff, SpilledText& out) : diff_(diff), out_(out.text()) {}

  // One element of "paths", two levels down: the printer's text of PathDiffJson, its list of
  // names (three levels down, each name four) written here from the parent links.
  void Path(const PathDiff& path) {
    const std::string element = PathDiffJson(diff_, path, false).dump(1);
    static const std::string kPlace = "\"path\": null";
    const size_t names_at = NullOf(element, kPlace);
    AppendTwoDown(out_, element, 0, names_at);
    diff_.NamesOf(path, names_);
    out_ += "[\n";
    for (size_t i = 0; i < names_.size(); ++i) {
      out_ += "    ";
      AppendPrintedString(out_, *names_[i], BadUtf8::kThrow);
      out_ += i + 1 < names_.size() ? ",\n" : "\n";
    }
    out_ += "   ]";
    AppendTwoDown(out_, element, names_at + 4, element.size());
  }

 private:
  const StackDiff& diff_;
  std::string& out_;
  std::vector<const std::string*> names_;  // a path's names
};

}  // namespace

void WriteStackDiffJson(const StackDiff& diff, const stackdiff::StackDiffNames& names,
                        size_t top, std::FILE* file) {
  for (const PathDiff& path : diff.paths) CheckPrintable(path.name);
  const std::string head = StackDiffHeadJson(diff, names, top).dump(1);
  // The paths' place in the head's text: a member of the top object, one level of indent.
  const size_t paths_at = NullOf(head, "\n \"paths\": null");
  SpilledText out(file);
  std::string& text = out.text();
  text.append(head, 0, paths_at);
  if (diff.paths.empty()) {
    text += "[]";
  } else {
    PathsWriter writer(diff, out);
    text += "[\n";
    for (size_t i = 0; i < diff.paths.size(); ++i) {
      text += "  ";
      writer.Path(diff.paths[i]);
      text += i + 1 < diff.paths.size() ? ",\n" : "\n";
      out.Spill();
    }
    text += " ]";
  }
  text.append(head, paths_at + 4, std::string::npos);
  text += '\n';
  out.Flush();
}

}  // namespace ptprof
