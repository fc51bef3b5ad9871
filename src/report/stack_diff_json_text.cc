#include "src/report/stack_diff_json_text.h"

#include <charconv>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "src/report/printed_json_string.h"
#include "src/report/spilled_text.h"

namespace ptprof {

namespace {

using stackdiff::PathDiff;
using stackdiff::PathSide;
using stackdiff::StackDiff;

// Where the null of `place` (a member the caller set to null, "\"key\": null", to write its
// value itself) begins in `printed`.
size_t NullOf(const std::string& printed, const std::string& place) {
  const size_t at = printed.find(place);
  if (at == std::string::npos) throw std::logic_error("WriteStackDiffJson: no " + place);
  return at + place.size() - 4;
}

// The members of one path as the printer prints StackDiffJson's path objects (their keys in
// order, as nlohmann::json keeps them), two levels down, as an element of the top object's
// array: the object's members three spaces in, a side's four. Written here rather than made as
// an object and printed: for a compiler's 300 K paths, that took a third of the time.
class PathsWriter {
 public:
  PathsWriter(const StackDiff& diff, SpilledText& out) : diff_(diff), out_(out.text()) {}

  void Path(const PathDiff& path) {
    out_ += "{\n";
    Side("a", path.a);
    out_ += ",\n";
    Side("b", path.b);
    out_ += ",\n   \"change\": ";
    AppendPrintedString(out_, PathChangeName(path.change), BadUtf8::kThrow);
    out_ += ",\n   \"delta_share\": ";
    Number(path.delta_share());
    out_ += ",\n   \"path\": ";
    Names(path);
    out_ += ",\n   \"starts_difference\": ";
    out_ += path.starts_difference ? "true" : "false";
    out_ += "\n  }";
  }

 private:
  void Number(uint64_t value) {
    char digits[20];
    out_.append(digits, std::to_chars(digits, digits + sizeof digits, value).ptr);
  }
  // A double as the printer prints one (its shortest exact digits, null for no number).
  void Number(double value) { out_ += nlohmann::json(value).dump(); }

  void Member(const char* key, uint64_t value, bool last = false) {
    out_ += "    \"";
    out_ += key;
    out_ += "\": ";
    Number(value);
    out_ += last ? "\n" : ",\n";
  }

  void Side(const char* key, const PathSide& side) {
    out_ += "   \"";
    out_ += key;
    out_ += "\": {\n";
    Member("entries", side.entries);
    out_ += side.present ? "    \"present\": true,\n" : "    \"present\": false,\n";
    Member("self_insns", side.self_insns);
    Member("self_ns", side.self_ns);
    out_ += "    \"share\": ";
    Number(side.share);
    out_ += ",\n";
    Member("total_insns", side.total_insns);
    Member("total_ns", side.total_ns, true);
    out_ += "   }";
  }

  // The path's names, four spaces in, from the parent links.
  void Names(const PathDiff& path) {
    diff_.NamesOf(path, names_);
    out_ += "[\n";
    for (size_t i = 0; i < names_.size(); ++i) {
      out_ += "    ";
      AppendPrintedString(out_, *names_[i], BadUtf8::kThrow);
      out_ += i + 1 < names_.size() ? ",\n" : "\n";
    }
    out_ += "   ]";
  }

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
